// Derivatives of the residual by LibTorch autograd, Jacobian assembly by colouring, and
// the J / J^T solver.

#include "sla/nonlinear/residual_ops.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include "sla/backends/native/krylov.h"
#include "tessera/core/error.h"

namespace tessera::sla::detail {

double ResidualProblem::norm(const at::Tensor& v) const {
  return global_norm ? global_norm(v) : v.norm().item<double>();
}

std::unique_ptr<JacobianSolve> ResidualProblem::jacobian_solver(const at::Tensor& u) {
  if (make_solver) return make_solver(*this, u);
  return std::make_unique<JacobianSolver>(*this, u);
}

at::Tensor ResidualProblem::eval(const at::Tensor& u) {
  at::NoGradGuard no_grad;
  ++evaluations;
  return fn(u, params);
}

at::Tensor ResidualProblem::vjp(const at::Tensor& u, const at::Tensor& w) {
  at::AutoGradMode grad_mode(true);
  at::Tensor leaf = u.detach().requires_grad_(true);
  at::Tensor f = fn(leaf, params);
  ++evaluations;
  auto g = torch::autograd::grad({f}, {leaf}, {w}, /*retain_graph=*/false, /*create_graph=*/false,
                                 /*allow_unused=*/true);
  return g[0].defined() ? g[0] : at::zeros_like(u);   // J^T w
}

at::Tensor ResidualProblem::jvp(const at::Tensor& u, const at::Tensor& v) {
  at::AutoGradMode grad_mode(true);
  at::Tensor leaf = u.detach().requires_grad_(true);
  at::Tensor f = fn(leaf, params);
  ++evaluations;
  at::Tensor w = at::zeros_like(f).requires_grad_(true);
  auto jt_w = torch::autograd::grad({f}, {leaf}, {w}, /*retain_graph=*/true, /*create_graph=*/true,
                                    /*allow_unused=*/true);   // J^T w, linear in w
  if (!jt_w[0].defined() || !jt_w[0].requires_grad()) return at::zeros_like(f);   // F does not depend on u
  auto jv = torch::autograd::grad({jt_w[0]}, {w}, {v}, /*retain_graph=*/false, /*create_graph=*/false,
                                  /*allow_unused=*/true);     // J v = d<J^T w, v>/dw
  return jv[0].defined() ? jv[0] : at::zeros_like(f);
}

at::Tensor color_rows(const SparseTensor& pattern, int64_t& num_colors) {
  const int64_t n = pattern.rows();
  at::Tensor rp = pattern.row_ptr().to(at::kCPU, at::kLong).contiguous();
  at::Tensor ci = pattern.col_idx().to(at::kCPU, at::kLong).contiguous();
  const detail::TransposedPattern& tp = pattern.transposed_pattern();
  at::Tensor trp = tp.row_ptr.to(at::kCPU, at::kLong).contiguous(), tci = tp.col_idx.to(at::kCPU, at::kLong).contiguous();
  const int64_t *r = rp.data_ptr<int64_t>(), *c = ci.data_ptr<int64_t>();
  const int64_t *tr = trp.data_ptr<int64_t>(), *tc = tci.data_ptr<int64_t>();
  at::Tensor colors = at::full({n}, -1, at::kLong);
  int64_t* color = colors.data_ptr<int64_t>();
  std::vector<int64_t> forbidden(n + 1, -1);   // forbidden[c] == i: colour c is taken by a neighbour of row i
  num_colors = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t p = r[i]; p < r[i + 1]; ++p) {          // columns j of row i
      for (int64_t q = tr[c[p]]; q < tr[c[p] + 1]; ++q) {   // rows sharing column j
        if (color[tc[q]] >= 0) forbidden[color[tc[q]]] = i;
      }
    }
    int64_t k = 0;
    while (forbidden[k] == i) ++k;
    color[i] = k;
    num_colors = std::max(num_colors, k + 1);
  }
  return colors;
}

SparseTensor ResidualProblem::assemble(const at::Tensor& u, const SparseTensor& pattern) {
  int64_t ncolors = 0;
  at::Tensor colors = color_rows(pattern, ncolors);
  this->colors = ncolors;
  const int64_t n = u.size(0);
  at::Tensor g = at::empty({ncolors, n}, u.options());
  for (int64_t k = 0; k < ncolors; ++k) {
    at::Tensor s = (colors == k).to(u.options());   // s_k: indicator of the rows of colour k
    g[k] = vjp(u, s);                                // (J^T s_k)_j = J_ij for the one row i of colour k using column j
  }
  at::Tensor rows = pattern.row_indices().to(at::kCPU);
  at::Tensor cols = pattern.col_idx().to(at::kCPU, at::kLong);
  at::Tensor values = g.index({colors.index_select(0, rows).to(u.device()), cols.to(u.device())});   // J_ij
  return pattern.with_values(values.to(at::kDouble));
}

JacobianSolver::JacobianSolver(ResidualProblem& problem, const at::Tensor& u) : problem_(problem), u_(u) {
  const auto& pattern = problem.options.jacobian_pattern;
  if (!pattern) return;
  TESSERA_CHECK(pattern->rows() == u.size(0) && pattern->cols() == u.size(0), DimensionMismatch,
                "nonlinear_solve: jacobian_pattern is ", pattern->rows(), " x ", pattern->cols(), " but u has ",
                u.size(0), " entries");
  SparseTensor j = problem.assemble(u, pattern->with_values(at::zeros({pattern->nnz()}, at::kDouble)));
  assembled_ = std::make_shared<BatchSolver>(j, problem.options.linear);   // factorised once, J and J^T
}

at::Tensor JacobianSolver::solve(const at::Tensor& rhs, bool transpose, SolveInfo& info) {
  const int64_t n = rhs.size(0);
  if (assembled_) {
    return assembled_->solve(rhs.reshape({1, n, 1}), transpose, info).reshape({n}).to(rhs.scalar_type());
  }
  LinearOperator op = [this, transpose](const at::Tensor& v) {
    return transpose ? problem_.vjp(u_, v) : problem_.jvp(u_, v);   // J^T v or J v
  };
  SolveOptions opts;
  opts.method = Method::GMRES;   // no symmetry assumed, forward or adjoint
  opts.preconditioner = Preconditioner::None;
  opts.rtol = problem_.options.krylov_rtol;
  opts.gmres_restart = 50;
  return krylov_solve(op, at::ones_like(rhs), rhs, opts, info);
}

}  // namespace tessera::sla::detail
