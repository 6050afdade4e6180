#pragma once
/// @file nonlinear_solve.h
/// Differentiable nonlinear solve: u* with F(u*, θ) = 0, gradients for the parameters θ
/// by implicit differentiation.
///
/// Forward: Newton's method J δ = -F(u) with J = ∂F/∂u, and a backtracking (Armijo) line
/// search on ||F||. The Jacobian is never written by the user:
///  - with `jacobian_pattern` (the sparsity of J, values ignored) J is assembled as a
///    SparseTensor by colouring: rows that share no column get one colour, and one
///    vector-Jacobian product J^T s_c per colour (s_c the indicator of the colour's rows)
///    fills all their entries; J δ = -F is then solved by solve() with `linear` options;
///  - without it, J v is applied matrix-free as a Jacobian-vector product (the
///    double-backward trick: J v = d/dw <J^T w, v>, two reverse passes on LibTorch's
///    autograd) inside GMRES.
/// With `anderson = true` the iteration is instead the chord method u <- u - J(u0)^{-1} F(u)
/// (J assembled or applied at u0 only), accelerated by Anderson mixing of depth
/// `anderson_depth`: fewer Jacobians, more residual evaluations.
///
/// Backward (one autograd node, whatever the number of Newton steps): one adjoint solve
/// J^T λ = dL/du at the solution — a transposed LU solve when J is assembled (backend auto:
/// UMFPACK), GMRES on the vector-Jacobian product otherwise; neither assumes symmetry — then
/// dL/dθ = -λ^T ∂F/∂θ, one vector-Jacobian product.
///
/// @code
///   // Bratu: F(u, θ) = A u - θ[0] exp(u) - h^2 (A the 2D Laplacian stencil)
///   auto residual = [&](const at::Tensor& u, const std::vector<at::Tensor>& p) {
///     return tessera::sla::matvec(A, u) - p[0] * at::exp(u) - h2;
///   };
///   at::Tensor theta = at::tensor({1.0}, at::kDouble).requires_grad_();
///   tessera::sla::NonlinearOptions opts;
///   opts.jacobian_pattern = A;                       // J has A's pattern
///   auto [u, info] = tessera::sla::nonlinear_solve(residual, at::zeros({n}, at::kDouble), {theta}, opts);
///   u.sum().backward();                              // theta.grad()
/// @endcode

#include <ATen/core/Tensor.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/sla/solve_options.h"
#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla {

/// F(u, θ): u [n] -> [n], differentiable with LibTorch autograd in u and θ.
using ResidualFn = std::function<at::Tensor(const at::Tensor& u, const std::vector<at::Tensor>& params)>;

struct NonlinearOptions {
  double rtol = 1e-10;            ///< stop when ||F(u)|| <= max(rtol ||F(u0)||, atol)
  double atol = 1e-12;
  int64_t maxiter = 50;           ///< Newton (or Anderson) iterations
  bool line_search = true;        ///< backtracking on ||F|| (Newton only)
  bool anderson = false;          ///< chord iteration with Anderson acceleration (see above)
  int64_t anderson_depth = 5;
  std::optional<SparseTensor> jacobian_pattern;   ///< the sparsity of ∂F/∂u (values ignored)
  SolveOptions linear;            ///< inner solves with an assembled J
  double krylov_rtol = 1e-12;     ///< matrix-free GMRES tolerance (forward and adjoint)
};

struct NonlinearInfo {
  SolveStatus status = SolveStatus::Converged;   ///< Converged, NotConverged, or the failing linear solve's
  int64_t iterations = 0;          ///< Newton / Anderson iterations
  int64_t residual_evaluations = 0;
  int64_t linear_iterations = 0;   ///< Krylov iterations summed (0 for direct inner solves)
  int64_t colors = 0;              ///< colours of the assembled Jacobian (VJPs per assembly)
  double residual = 0.0;           ///< ||F(u*)||
  std::string message;
};

/// Solves F(u, params) = 0 from u0. The result is differentiable in every params tensor
/// that requires grad (not in u0). Throws DimensionMismatch when F(u0) is not shaped like
/// u0 [n], InvalidInput for NaN/Inf in F(u0); a non-converged iteration is reported in info.
std::pair<at::Tensor, NonlinearInfo> nonlinear_solve(const ResidualFn& residual, const at::Tensor& u0,
                                                      const std::vector<at::Tensor>& params,
                                                      const NonlinearOptions& options = {});

}  // namespace tessera::sla
