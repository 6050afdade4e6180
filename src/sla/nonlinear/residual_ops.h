#pragma once
// The residual F(u, θ) and its derivatives by LibTorch autograd: evaluation, vector-
// Jacobian products J^T w (one reverse pass), Jacobian-vector products J v (double
// backward), a sparse Jacobian assembled by colouring, and the linear solver with J or J^T
// that Newton's method and the adjoint use.

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <vector>

#include "sla/batch_solver.h"
#include "tessera/sla/nonlinear_solve.h"

namespace tessera::sla::detail {

/// A solver with J(u) or J(u)^T, made at one u (Newton's step, the adjoint solve).
class JacobianSolve {
 public:
  virtual ~JacobianSolve() = default;
  /// x with J x = rhs (J^T x = rhs when transpose). info: status, iterations, residual.
  virtual at::Tensor solve(const at::Tensor& rhs, bool transpose, SolveInfo& info) = 0;
};

struct ResidualProblem {
  ResidualFn fn;
  std::vector<at::Tensor> params;   ///< detached copies of θ
  NonlinearOptions options;
  int64_t evaluations = 0;
  int64_t colors = 0;
  /// ||v|| of the whole vector; empty: one process (a distributed problem sums over ranks).
  std::function<double(const at::Tensor&)> global_norm;
  /// The solver with J(u); empty: JacobianSolver (one process).
  std::function<std::unique_ptr<JacobianSolve>(ResidualProblem&, const at::Tensor&)> make_solver;

  double norm(const at::Tensor& v) const;
  std::unique_ptr<JacobianSolve> jacobian_solver(const at::Tensor& u);

  /// F(u) without recording a graph.
  at::Tensor eval(const at::Tensor& u);
  /// J^T w at u.
  at::Tensor vjp(const at::Tensor& u, const at::Tensor& w);
  /// J v at u: J v = d/dw <J^T w, v> (the backward of the backward).
  at::Tensor jvp(const at::Tensor& u, const at::Tensor& v);
  /// J at u on `pattern`: one VJP per colour of the rows (rows sharing a column differ).
  SparseTensor assemble(const at::Tensor& u, const SparseTensor& pattern);
};

/// Solves with J(u) or J(u)^T: a factorisation (or the chosen Krylov method) of the
/// assembled J, or GMRES on JVPs / VJPs when no pattern was given.
class JacobianSolver final : public JacobianSolve {
 public:
  JacobianSolver(ResidualProblem& problem, const at::Tensor& u);
  at::Tensor solve(const at::Tensor& rhs, bool transpose, SolveInfo& info) override;

 private:
  ResidualProblem& problem_;
  at::Tensor u_;
  std::shared_ptr<BatchSolver> assembled_;
};

/// u* as the output of one autograd node whose inputs are `params`: its backward solves
/// J(u*)^T λ = dL/du with problem->jacobian_solver and returns dL/dθ = -λ^T ∂F/∂θ.
at::Tensor implicit_solution(const std::vector<at::Tensor>& params, const at::Tensor& u_star,
                             const std::shared_ptr<ResidualProblem>& problem);

/// Row colouring of a square pattern such that rows sharing a column differ (greedy).
/// Returns int64 [rows] colours 0 .. C-1.
at::Tensor color_rows(const SparseTensor& pattern, int64_t& num_colors);

}  // namespace tessera::sla::detail
