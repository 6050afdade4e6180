#pragma once
/// @file generators.h
/// Test and benchmark matrices built directly in CSR (no COO at full size): the finite
/// difference Laplacian with Dirichlet boundaries on an N x N grid (5-point stencil,
/// diagonal 4, neighbours -1) and an N x N x N grid (7-point stencil, diagonal 6).
/// Unknowns are numbered lexicographically (x fastest). Both matrices are SPD.
/// Also a shifted 2D Laplacian L - sigma I (symmetric indefinite once sigma exceeds the
/// smallest eigenvalue of L) and a 2D convection-diffusion operator (non-symmetric).
/// Indices are int32 whenever the matrix allows, written directly (no int64 or COO copy).
///
/// @code
///   auto A = tessera::sla::poisson2d(64);              // 4096 x 4096, float64
///   auto B = tessera::sla::poisson3d(16, at::kFloat);  // 4096 x 4096, float32
///   auto H = tessera::sla::shifted_laplacian2d(64, 0.5);          // indefinite: MINRES
///   auto C = tessera::sla::convection_diffusion2d(64, 100, 50);   // GMRES + ILU(0)
/// @endcode

#include <ATen/core/Tensor.h>

#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla {

SparseTensor poisson2d(int64_t n, at::ScalarType dtype = at::kDouble);
SparseTensor poisson3d(int64_t n, at::ScalarType dtype = at::kDouble);
/// 5-point (4 - shift) on the diagonal, -1 for each neighbour.
SparseTensor shifted_laplacian2d(int64_t n, double shift, at::ScalarType dtype = at::kDouble);
/// h^2 (-Δu + w·∇u) on the unit square with h = 1 / (n + 1), central differences: diagonal 4,
/// neighbour in direction d at -1 -+ h w_d / 2 (below / above). Non-symmetric when w != 0.
SparseTensor convection_diffusion2d(int64_t n, double wx, double wy, at::ScalarType dtype = at::kDouble);

}  // namespace tessera::sla
