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
/// Variable coefficients: -∇·(κ ∇u) on the same grids by 5-/7-point finite volumes, times h²
/// (so κ ≡ 1 gives exactly poisson2d / poisson3d). κ is a log-normal cell field,
/// κ_i = exp(σ z_i) with z_i = standard_normal(seed, i) (random_field.h), a function of the
/// global cell index only, so a slice of rows (variable_diffusion_rows) equals the same rows
/// of the whole matrix. Row i: a_ij = -κ_f for the face f shared with neighbour j, where
/// κ_f = 2 κ_i κ_j / (κ_i + κ_j) (harmonic mean), and a_ii = Σ_faces κ_f, a boundary face
/// (Dirichlet u = 0 one cell away) counting κ_f = κ_i. The matrix is symmetric bitwise and
/// positive definite; σ sets the contrast, max κ / min κ = exp(2 σ max |z|) with max |z| ≈ 5 at
/// 10^6 cells.
///
/// Unstructured: fe_laplacian2d(N) is the P1 finite-element stiffness matrix ∫ ∇φ_p · ∇φ_q
/// on a triangle mesh of the unit square with N x N interior nodes: the (N+1)^2 squares of
/// the grid, each cut along a diagonal chosen at random (per square), and every interior node
/// moved by up to ± jitter h / 2 in x and y (h = 1/(N+1)); the boundary nodes carry the
/// Dirichlet condition and are eliminated. Rows are numbered like poisson2d; a row has 5 to 9
/// entries depending on the cuts. With jitter = 0 it equals poisson2d(N) in value (right
/// isosceles triangles: the diagonal couplings are 0); rows of nodes away from the boundary
/// sum to 0. Jitter and cuts are functions of (seed, node or square index), as κ above.
///
/// @code
///   auto A = tessera::sla::poisson2d(64);              // 4096 x 4096, float64
///   auto B = tessera::sla::poisson3d(16, at::kFloat);  // 4096 x 4096, float32
///   auto H = tessera::sla::shifted_laplacian2d(64, 0.5);          // indefinite: MINRES
///   auto C = tessera::sla::convection_diffusion2d(64, 100, 50);   // GMRES + ILU(0)
///   auto K = tessera::sla::variable_diffusion2d(1000, {.sigma = 1.0, .seed = 7});   // 10^6 rows
///   auto S = tessera::sla::variable_diffusion_rows(3, 100, {1.0, 7}, 0, 250000);     // a rank's rows
///   auto F = tessera::sla::fe_laplacian2d(1000, {.jitter = 0.3, .seed = 7});           // 10^6 rows
/// @endcode

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla {

SparseTensor poisson2d(int64_t n, at::ScalarType dtype = at::kDouble);
SparseTensor poisson3d(int64_t n, at::ScalarType dtype = at::kDouble);
/// 5-point (4 - shift) on the diagonal, -1 for each neighbour.
SparseTensor shifted_laplacian2d(int64_t n, double shift, at::ScalarType dtype = at::kDouble);
/// h^2 (-Δu + w·∇u) on the unit square with h = 1 / (n + 1), central differences: diagonal 4,
/// neighbour in direction d at -1 -+ h w_d / 2 (below / above). Non-symmetric when w != 0.
SparseTensor convection_diffusion2d(int64_t n, double wx, double wy, at::ScalarType dtype = at::kDouble);

/// The log-normal conductivity κ_i = exp(sigma * z_i), z_i = standard_normal(seed, i).
struct LogNormalField {
  double sigma = 1.0;   ///< standard deviation of log κ; 0 gives κ ≡ 1
  uint64_t seed = 0;
};

/// -∇·(κ ∇u) h² on the n x n grid (5-point finite volumes, harmonic face means): SPD.
SparseTensor variable_diffusion2d(int64_t n, const LogNormalField& field = {}, at::ScalarType dtype = at::kDouble);
/// The same on the n x n x n grid (7-point).
SparseTensor variable_diffusion3d(int64_t n, const LogNormalField& field = {}, at::ScalarType dtype = at::kDouble);
/// Rows [row_begin, row_end) of variable_diffusion2d (dims = 2) or 3d (dims = 3): a
/// (row_end - row_begin) x n^dims matrix with global column indices, for one rank's rows.
SparseTensor variable_diffusion_rows(int dims, int64_t n, const LogNormalField& field, int64_t row_begin,
                                     int64_t row_end, at::ScalarType dtype = at::kDouble);

/// The perturbation of fe_laplacian2d's mesh.
struct PerturbedMesh {
  double jitter = 0.3;           ///< node displacement, at most ± jitter h / 2 per coordinate; [0, 0.5)
  bool random_diagonals = true;  ///< false: every square cut along the same diagonal
  uint64_t seed = 0;
};

/// P1 finite-element Laplacian with N x N interior unknowns on the perturbed mesh: SPD.
SparseTensor fe_laplacian2d(int64_t n, const PerturbedMesh& mesh = {}, at::ScalarType dtype = at::kDouble);

}  // namespace tessera::sla
