#pragma once
// The residual F(u, θ) and its derivatives by LibTorch autograd: evaluation, vector-
// Jacobian products J^T w (one reverse pass), Jacobian-vector products J v (double
// backward), a sparse Jacobian assembled by colouring, and the linear solver with J or J^T
// that Newton's method and the adjoint use.

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "sla/batch_solver.h"
#include "tessera/sla/nonlinear_solve.h"

namespace tessera::sla::detail {

struct ResidualProblem {
  ResidualFn fn;
  std::vector<at::Tensor> params;   ///< detached copies of θ
  NonlinearOptions options;
  int64_t evaluations = 0;
  int64_t colors = 0;

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
class JacobianSolver {
 public:
  JacobianSolver(ResidualProblem& problem, const at::Tensor& u);
  /// x with J x = rhs (J^T x = rhs when transpose). info: status, iterations, residual.
  at::Tensor solve(const at::Tensor& rhs, bool transpose, SolveInfo& info);

 private:
  ResidualProblem& problem_;
  at::Tensor u_;
  std::shared_ptr<BatchSolver> assembled_;
};

/// Row colouring of a square pattern such that rows sharing a column differ (greedy).
/// Returns int64 [rows] colours 0 .. C-1.
at::Tensor color_rows(const SparseTensor& pattern, int64_t& num_colors);

}  // namespace tessera::sla::detail
