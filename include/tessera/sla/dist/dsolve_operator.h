#pragma once
/// @file dsolve_operator.h
/// solve_operator() across ranks: x = A(θ)^{-1} b with a user linear operator whose vectors
/// are distributed by rows.
///
/// The contract:
///  - each rank owns `op.rows` rows (any split, ranks may own none); b, x and the vectors
///    handed to `apply`, `apply_transposed` and the preconditioner hooks are this rank's
///    rows, in the order the user chose;
///  - `apply` maps this rank's rows of x to this rank's rows of y = A x. It is called on
///    every rank at the same time (collectively), so it may communicate itself (a halo
///    exchange, DSparseTensor::matvec, dist::differentiable::all_gather, ...);
///  - inner products and norms are summed over the ranks by the communicator (the Krylov
///    loops are the single-process ones), so iterations and the SolveInfo are the same on
///    every rank and match one process up to the order of floating-point sums;
///  - without `apply_transposed` and `symmetric`, A^T v is the vector-Jacobian product
///    through `apply`: its communication must then be differentiable (as
///    DSparseTensor::matvec and dist::differentiable's collectives are);
///  - gradients: every rank calls backward. dL/db is this rank's rows of λ; for θ each rank
///    gets ∂/∂θ of its own rows' part of -<λ, A(θ) x> (plus what its communication
///    carries back), so for a θ held alike on every rank the whole gradient is the sum of
///    the ranks' θ.grad() (the rule of DSparseTensor::from_global and dnonlinear_solve).
///
/// @code
///   auto comm = tessera::dist::world();
///   tessera::sla::UserOperator op;
///   op.apply = [&](const at::Tensor& x, const std::vector<at::Tensor>& p) {   // collective
///     return dA.with_values(p[0]).matvec(x);
///   };
///   op.symmetric = true;
///   op.rows = dA.owned_rows();
///   auto [x, info] = tessera::sla::dsolve_operator(op, b_owned, {values}, comm);
/// @endcode

#include <ATen/core/Tensor.h>

#include <memory>
#include <utility>
#include <vector>

#include "tessera/sla/solve_operator.h"

namespace tessera::dist {
class Communicator;
}

namespace tessera::sla {

/// Collective. b: this rank's rows [op.rows] or [op.rows, k]. Options, errors and
/// non-convergence as solve_operator().
std::pair<at::Tensor, SolveInfo> dsolve_operator(const UserOperator& op, const at::Tensor& b,
                                                 const std::vector<at::Tensor>& params,
                                                 const std::shared_ptr<dist::Communicator>& comm,
                                                 const OperatorSolveOptions& options = {});

}  // namespace tessera::sla
