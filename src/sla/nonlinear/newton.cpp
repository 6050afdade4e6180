// Newton with line search, and Anderson-accelerated chord iterations.

#include "sla/nonlinear/newton.h"

#include <ATen/ATen.h>

#include <cmath>
#include <deque>

#include "sla/batch_solver.h"

namespace tessera::sla::detail {
namespace {

/// A failed inner solve ends the iteration with its status.
bool linear_failed(const SolveInfo& lin, NonlinearInfo& info) {
  info.linear_iterations += lin.iterations;
  if (lin.status == SolveStatus::Converged) return false;
  info.status = lin.status;
  info.message = "nonlinear_solve: the linear solve with J ended '" + std::string(to_string(lin.status)) +
                 "' (relative residual " + std::to_string(lin.residual) + ")" +
                 (lin.message.empty() ? "" : ": " + lin.message);
  return true;
}

}  // namespace

at::Tensor newton(ResidualProblem& problem, const at::Tensor& u0, NonlinearInfo& info) {
  const NonlinearOptions& o = problem.options;
  at::Tensor u = u0.detach().clone();
  at::Tensor f = problem.eval(u);
  double fn = problem.norm(f);
  const double tol = std::max(o.rtol * fn, o.atol);   // ||F|| <= max(rtol ||F(u0)||, atol)
  info.status = SolveStatus::NotConverged;
  for (info.iterations = 0; info.iterations < o.maxiter && !(fn <= tol); ++info.iterations) {
    auto jac = problem.jacobian_solver(u);
    SolveInfo lin;
    at::Tensor delta = jac->solve(-f, false, lin);    // J δ = -F
    if (linear_failed(lin, info)) break;
    double t = 1.0;
    at::Tensor u_try, f_try;
    double fn_try = 0.0;
    while (true) {
      u_try = u + t * delta;                          // u + t δ
      f_try = problem.eval(u_try);
      fn_try = problem.norm(f_try);
      if (!o.line_search || fn_try <= (1.0 - 1e-4 * t) * fn) break;   // Armijo on ||F||
      t *= 0.5;
      if (t < 1e-8) break;
    }
    if (!(fn_try < fn) && o.line_search) {
      info.message = "nonlinear_solve: the line search found no decrease of ||F|| (" + std::to_string(fn) + ")";
      break;
    }
    u = u_try;
    f = f_try;
    fn = fn_try;
  }
  if (fn <= tol) {
    info.status = SolveStatus::Converged;
    info.message.clear();
  } else if (info.message.empty() && info.status == SolveStatus::NotConverged) {
    info.message = "nonlinear_solve: ||F|| = " + std::to_string(fn) + " after " + std::to_string(info.iterations) +
                   " Newton iterations (tolerance " + std::to_string(tol) + ")";
  }
  info.residual = fn;
  return u;
}

at::Tensor anderson(ResidualProblem& problem, const at::Tensor& u0, NonlinearInfo& info) {
  const NonlinearOptions& o = problem.options;
  at::Tensor u = u0.detach().clone();
  auto jac = problem.jacobian_solver(u);              // J(u0), once
  at::Tensor f = problem.eval(u);
  double fn = problem.norm(f);
  const double tol = std::max(o.rtol * fn, o.atol);
  std::deque<at::Tensor> step_hist, g_hist;           // f_k = g(u_k) - u_k and g(u_k)
  info.status = SolveStatus::NotConverged;
  for (info.iterations = 0; info.iterations < o.maxiter && !(fn <= tol); ++info.iterations) {
    SolveInfo lin;
    at::Tensor step = jac->solve(-f, false, lin);     // f_k = -J0^{-1} F(u_k)
    if (linear_failed(lin, info)) break;
    at::Tensor g = u + step;                          // g(u_k)
    at::Tensor next = g;
    if (!step_hist.empty()) {
      std::vector<at::Tensor> df, dg;
      for (size_t i = 0; i < step_hist.size(); ++i) {
        const at::Tensor& fi = step_hist[i];
        const at::Tensor& fnext = i + 1 < step_hist.size() ? step_hist[i + 1] : step;
        const at::Tensor& gnext = i + 1 < g_hist.size() ? g_hist[i + 1] : g;
        df.push_back(fnext - fi);                     // Δf_i
        dg.push_back(gnext - g_hist[i]);              // Δg_i
      }
      at::Tensor dF = at::stack(df, 1), dG = at::stack(dg, 1);
      at::Tensor gamma = std::get<0>(at::linalg_lstsq(dF, step.unsqueeze(1)));   // min ||f_k - ΔF γ||
      next = g - at::mm(dG, gamma).squeeze(1);        // u_{k+1} = g_k - ΔG γ
    }
    step_hist.push_back(step);
    g_hist.push_back(g);
    if (static_cast<int64_t>(step_hist.size()) > o.anderson_depth) {
      step_hist.pop_front();
      g_hist.pop_front();
    }
    u = next;
    f = problem.eval(u);
    fn = problem.norm(f);
  }
  if (fn <= tol) {
    info.status = SolveStatus::Converged;
    info.message.clear();
  } else if (info.message.empty()) {
    info.message = "nonlinear_solve (Anderson): ||F|| = " + std::to_string(fn) + " after " +
                   std::to_string(info.iterations) + " iterations";
  }
  info.residual = fn;
  return u;
}

}  // namespace tessera::sla::detail
