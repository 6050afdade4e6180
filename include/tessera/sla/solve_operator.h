#pragma once
/// @file solve_operator.h
/// Differentiable solve `x = A(θ)^{-1} b` with a user linear operator: A is never stored,
/// only applied by the user's function `y = A(θ) x` (and optionally `A(θ)^T x`).
///
/// Forward: the native Krylov methods (CG, BiCGStab, GMRES, MINRES; the loops of solve()'s
/// native backend) on the user's operator, preconditioned by the user's hook
/// `z = M^{-1} r` when one is given.
///
/// Backward (one autograd node): one adjoint solve `A^T λ = g` with the same method and
/// M^{-T}, then
///   dL/db = λ,   dL/dθ = -∂/∂θ <λ, A(θ) x>,
/// the latter one vector-Jacobian product through `apply` (LibTorch autograd of the user's
/// function, with x and λ held fixed). A^T v comes from `apply_transposed` when given, from
/// `apply` itself when `symmetric`, and otherwise from the vector-Jacobian product
/// A^T v = ∂/∂x <v, A x> through `apply` (so `apply` must then be differentiable in x).
///
/// @code
///   // A(κ) x: the finite-volume operator of -∇·(κ∇u), applied without assembling it
///   tessera::sla::UserOperator op;
///   op.apply = [](const at::Tensor& x, const std::vector<at::Tensor>& p) { return diffusion_apply(x, p[0]); };
///   op.symmetric = true;
///   op.rows = n * n;
///   tessera::sla::OperatorSolveOptions opts;                 // method Auto: CG (symmetric)
///   opts.preconditioner = [&](const at::Tensor& r) { return r / diagonal; };   // Jacobi
///   at::Tensor kappa = at::ones({n, n}, at::kDouble).requires_grad_();
///   auto [x, info] = tessera::sla::solve_operator(op, b, {kappa}, opts);
///   x.sum().backward();                                      // kappa.grad(), b.grad()
/// @endcode

#include <ATen/core/Tensor.h>

#include <functional>
#include <utility>
#include <vector>

#include "tessera/sla/solve_options.h"

namespace tessera::sla {

/// y = A(θ) x for a vector x [rows]; differentiable in θ (and in x for the transpose
/// by vector-Jacobian products) with LibTorch autograd. Must be linear in x.
using OperatorFn = std::function<at::Tensor(const at::Tensor& x, const std::vector<at::Tensor>& params)>;

/// z = M^{-1} r for a vector r [rows]: the preconditioner hook (no gradient flows through it).
using PreconditionerFn = std::function<at::Tensor(const at::Tensor& r)>;

/// A square linear operator given by functions.
struct UserOperator {
  OperatorFn apply;              ///< y = A(θ) x (required)
  OperatorFn apply_transposed;   ///< y = A(θ)^T x (optional; see the file comment)
  bool symmetric = false;        ///< A = A^T: the adjoint solve applies `apply`
  int64_t rows = 0;              ///< n; across ranks: this rank's rows
};

struct OperatorSolveOptions {
  Method method = Method::Auto;  ///< CG, BiCGStab, GMRES, MINRES; Auto: CG if symmetric, else GMRES
  double rtol = 1e-10;           ///< stop when ||r|| <= max(rtol ||b||, atol)
  double atol = 0.0;
  int64_t maxiter = 0;           ///< 0 means 10 n (capped at 100000)
  int64_t gmres_restart = 50;
  PreconditionerFn preconditioner;             ///< M^{-1} r; empty: no preconditioner
  /// M^{-T} r for the adjoint solve; empty: `preconditioner` (exact for a symmetric M such
  /// as Jacobi; otherwise only the adjoint's convergence rate depends on it).
  PreconditionerFn preconditioner_transposed;
};

/// Solves A(params) x = b. b: [rows] or [rows, k] (columns solved one by one), float32 or
/// float64. Differentiable in b and in every params tensor that requires grad. A solve
/// that does not converge is reported in SolveInfo (status, iterations, relative
/// residual), as with solve(); a non-converged adjoint solve warns. Throws
/// DimensionMismatch when b or a result of `apply` (or of a hook) has the wrong shape,
/// InvalidInput for a missing `apply`, NaN/Inf in b or a result of another dtype than b,
/// Unsupported for a method that is not a Krylov method. CG and MINRES need a symmetric A
/// (CG an SPD one) whether or not `symmetric` says so: the flag only spares the transpose.
std::pair<at::Tensor, SolveInfo> solve_operator(const UserOperator& op, const at::Tensor& b,
                                                const std::vector<at::Tensor>& params,
                                                const OperatorSolveOptions& options = {});

}  // namespace tessera::sla
