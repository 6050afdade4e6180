#pragma once
/// @file generators.h
/// Test and benchmark matrices built directly in CSR (no COO at full size): the finite
/// difference Laplacian with Dirichlet boundaries on an N x N grid (5-point stencil,
/// diagonal 4, neighbours -1) and an N x N x N grid (7-point stencil, diagonal 6).
/// Unknowns are numbered lexicographically (x fastest). Both matrices are SPD.
///
/// @code
///   auto A = tessera::sla::poisson2d(64);              // 4096 x 4096, float64
///   auto B = tessera::sla::poisson3d(16, at::kFloat);  // 4096 x 4096, float32
/// @endcode

#include <ATen/core/Tensor.h>

#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla {

SparseTensor poisson2d(int64_t n, at::ScalarType dtype = at::kDouble);
SparseTensor poisson3d(int64_t n, at::ScalarType dtype = at::kDouble);

}  // namespace tessera::sla
