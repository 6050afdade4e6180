#pragma once
/// @file dnonlinear_solve.h
/// Differentiable nonlinear solve across ranks: u* with F(u*, θ) = 0 where u and F are
/// distributed by rows like a DSparseTensor's vectors; nonlinear_solve() across ranks.
///
/// F is the user's function of this rank's rows of u (typically built from
/// DSparseTensor::matvec, which exchanges halos, and pointwise operations); it is called
/// collectively, and LibTorch's autograd differentiates it through the halo exchanges.
///
/// Forward: Newton's method J δ = -F(u) with a backtracking (Armijo) line search on the
/// global ||F||. J = ∂F/∂u is assembled on `jacobian_pattern` (a DSparseTensor: its rows,
/// partition and pattern; values ignored) by colouring, as one process does: rows that
/// share no column get one colour and one vector-Jacobian product J^T s_c per colour fills
/// their entries. Rows whose columns are all private to their rank (owned, and in no other
/// rank's halo) share colours across ranks; the other rows take a colour range of their
/// rank's class, ranks that may share a column (neighbours or neighbours of one rank)
/// being in different classes; only colour counts and neighbour lists are exchanged, so
/// the count stays bounded for mesh-like partitions. The entries of halo
/// columns arrive by one halo exchange of the products. J δ = -F is solved by dsolve with
/// `options.linear` (native Krylov with its preconditioners, or backend mumps).
///
/// Backward (one autograd node): one adjoint solve J^T λ = dL/du at the solution by
/// dsolve_transposed (same linear options), then dL/dθ = -λ^T ∂F/∂θ, one vector-Jacobian
/// product. θ is typically the same on every rank: as with DSparseTensor::from_global's
/// values, each rank's θ.grad() holds its rows' part (sum over ranks for the whole).
/// Anderson acceleration and the matrix-free path are single-process (Unsupported here).
///
/// @code
///   // F(u, θ) = A u + θ[0] u^3 - b, A distributed
///   auto residual = [&](const at::Tensor& u, const std::vector<at::Tensor>& p) {
///     return dA.matvec(u) + p[0] * u.pow(3) - b_owned;
///   };
///   auto [u, info] = tessera::sla::dnonlinear_solve(residual, u0_owned, {theta}, dA);
/// @endcode

#include <ATen/core/Tensor.h>

#include <utility>
#include <vector>

#include "tessera/sla/dist/dsparse_tensor.h"
#include "tessera/sla/nonlinear_solve.h"

namespace tessera::sla {

/// Solves F(u, params) = 0 from u0 (this rank's rows, [owned]); collective. The result is
/// differentiable in every params tensor that requires grad. options.jacobian_pattern must
/// be unset (the pattern is `jacobian_pattern`); options.anderson false. Info (iterations,
/// ||F||, colours) is the same on every rank.
std::pair<at::Tensor, NonlinearInfo> dnonlinear_solve(const ResidualFn& residual, const at::Tensor& u0,
                                                       const std::vector<at::Tensor>& params,
                                                       const DSparseTensor& jacobian_pattern,
                                                       const NonlinearOptions& options = {});

}  // namespace tessera::sla
