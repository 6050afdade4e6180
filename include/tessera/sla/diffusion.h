#pragma once
/// @file diffusion.h
/// The cell-centred finite-volume operator of -∇·(κ ∇u) on the unit square, assembled
/// from a cell conductivity field with ATen ops, so its values are differentiable in κ.
///
/// Grid: n x n cells of side h = 1/n, unknown (row r, column c) numbered r * n + c
/// (x fastest, as `poisson2d`). Face conductivity between neighbouring cells is the
/// harmonic mean κ_f = 2 κ_a κ_b / (κ_a + κ_b); a boundary face (Dirichlet u = 0 on the
/// boundary, ghost cell mirrored across the face) has transmissibility 2 κ_cell. Row i:
///   (A u)_i = (1/h²) Σ_faces T_f (u_i - u_neighbour),  u_neighbour = 0 across the boundary.
/// A is SPD, has poisson2d(n)'s pattern and equals poisson2d(n) * n² for κ ≡ 1 except
/// on boundary rows (whose boundary faces weigh 2).
///
/// @code
///   at::Tensor theta = at::zeros({64, 64}, at::kDouble).requires_grad_();
///   auto A = tessera::sla::diffusion2d(at::softplus(theta));   // values depend on theta
///   auto [u, info] = tessera::sla::solve(A, at::ones({64 * 64}, at::kDouble));
///   u.sum().backward();                                        // theta.grad()
/// @endcode

#include <ATen/core/Tensor.h>

#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla {

/// `kappa`: [..., n, n] positive cell conductivities (float32/float64; leading dims become
/// A's batch). Throws InvalidInput for a non-square or empty field.
SparseTensor diffusion2d(const at::Tensor& kappa);

}  // namespace tessera::sla
