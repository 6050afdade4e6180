#pragma once
// A user linear operator with its parameters held fixed: the Krylov solves of
// solve_operator's forward (A x = b) and adjoint (A^T λ = g) passes, and the
// vector-Jacobian product of its backward, for one process or across ranks (the space).

#include <ATen/core/Tensor.h>

#include <vector>

#include "sla/backends/native/krylov.h"
#include "tessera/sla/solve_operator.h"

namespace tessera::sla::detail {

class OperatorProblem {
 public:
  /// `options` resolved (resolve_operator_options); `space` sums inner products (over the
  /// ranks when distributed); `name` prefixes error messages.
  OperatorProblem(UserOperator op, const std::vector<at::Tensor>& params, OperatorSolveOptions options,
                  KrylovSpace space, const char* name);

  /// x = A^{-1} b, or A^{-T} b with `transpose`; b [rows] or [rows, k], solved column by
  /// column; info is the worst over the columns. Records no graph.
  at::Tensor solve(const at::Tensor& b, bool transpose, SolveInfo& info) const;

  /// -∂/∂θ_i <λ, A(θ) x> for every i with wanted[i] (undefined otherwise): one
  /// vector-Jacobian product through `apply` with x and λ held fixed.
  std::vector<at::Tensor> params_vjp(const at::Tensor& x, const at::Tensor& lambda,
                                     const std::vector<bool>& wanted) const;

  size_t param_count() const { return params_.size(); }

 private:
  /// A x (or A^T x) with the given parameters; checks the result's shape and dtype.
  at::Tensor apply(const at::Tensor& x, const std::vector<at::Tensor>& params, bool transpose) const;
  /// A^T v = ∂/∂x <v, A x>: the vector-Jacobian product through `apply` (A is linear in x).
  at::Tensor transposed_by_vjp(const at::Tensor& v) const;
  /// A hook's M^{-1} r (or M^{-T} r), checked like `apply`.
  at::Tensor precondition(const at::Tensor& r, bool transpose) const;

  UserOperator op_;
  std::vector<at::Tensor> params_;   ///< detached
  OperatorSolveOptions options_;
  KrylovSpace space_;
  const char* name_;
};

/// Checks op and b (shapes, dtype, NaN/Inf) and resolves the method: Auto is CG for a
/// symmetric operator, GMRES otherwise. Throws as documented in solve_operator.h.
OperatorSolveOptions resolve_operator_options(const UserOperator& op, const at::Tensor& b,
                                              const OperatorSolveOptions& options, const char* name);

}  // namespace tessera::sla::detail
