// nonlinear_solve: input checks, the forward iterations, and the autograd Function whose
// backward is one adjoint solve J^T λ = dL/du and one vector-Jacobian product for θ.

#include "tessera/sla/nonlinear_solve.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include "sla/nonlinear/newton.h"
#include "sla/nonlinear/residual_ops.h"
#include "tessera/core/error.h"

namespace tessera::sla {
namespace {

struct ProblemHolder : public torch::CustomClassHolder {
  explicit ProblemHolder(std::shared_ptr<detail::ResidualProblem> p) : problem(std::move(p)) {}
  std::shared_ptr<detail::ResidualProblem> problem;
};

struct NonlinearFunction : public torch::autograd::Function<NonlinearFunction> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, at::TensorList params, const at::Tensor& u_star,
                            const std::shared_ptr<detail::ResidualProblem>& problem) {
    ctx->saved_data["problem"] = c10::IValue::make_capsule(c10::make_intrusive<ProblemHolder>(problem));
    ctx->saved_data["count"] = static_cast<int64_t>(params.size());
    ctx->save_for_backward({u_star});
    return u_star.clone();
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto problem = static_cast<ProblemHolder*>(ctx->saved_data["problem"].toCapsule().get())->problem;
    const int64_t count = ctx->saved_data["count"].toInt();
    const at::Tensor u = ctx->get_saved_variables()[0];
    torch::autograd::variable_list out(count + 2);
    auto jac = problem->jacobian_solver(u);           // J at the solution
    SolveInfo adjoint;
    at::Tensor lambda = jac->solve(grads[0].to(u.scalar_type()), /*transpose=*/true, adjoint);   // J^T λ = dL/du
    if (adjoint.status != SolveStatus::Converged) {
      TORCH_WARN("tessera::sla::nonlinear_solve backward: the adjoint solve J^T λ = g ended '",
                 to_string(adjoint.status), "' (relative residual ", adjoint.residual, "); gradients are inaccurate");
    }
    std::vector<at::Tensor> leaves;
    std::vector<int64_t> which;
    for (int64_t i = 0; i < count; ++i) {
      if (!ctx->needs_input_grad(i)) continue;
      leaves.push_back(problem->params[i].detach().requires_grad_(true));
      which.push_back(i);
    }
    if (leaves.empty()) return out;
    at::AutoGradMode grad_mode(true);
    std::vector<at::Tensor> args = problem->params;
    for (size_t k = 0; k < which.size(); ++k) args[which[k]] = leaves[k];
    at::Tensor f = problem->fn(u, args);
    // dL/dθ = -λ^T ∂F/∂θ
    auto g = torch::autograd::grad({f}, leaves, {-lambda}, false, false, /*allow_unused=*/true);
    for (size_t k = 0; k < which.size(); ++k) out[which[k]] = g[k];
    return out;
  }
};

}  // namespace

namespace detail {

at::Tensor implicit_solution(const std::vector<at::Tensor>& params, const at::Tensor& u_star,
                             const std::shared_ptr<ResidualProblem>& problem) {
  return NonlinearFunction::apply(at::TensorList(params), u_star, problem);
}

}  // namespace detail

std::pair<at::Tensor, NonlinearInfo> nonlinear_solve(const ResidualFn& residual, const at::Tensor& u0,
                                                      const std::vector<at::Tensor>& params,
                                                      const NonlinearOptions& options) {
  TESSERA_CHECK(u0.defined() && u0.dim() == 1 && u0.numel() > 0, DimensionMismatch,
                "nonlinear_solve: u0 must be a non-empty vector [n], got ", u0.defined() ? u0.sizes() : at::IntArrayRef{});
  TESSERA_CHECK(options.maxiter > 0 && options.anderson_depth > 0, InvalidInput,
                "nonlinear_solve: maxiter and anderson_depth must be > 0");
  auto problem = std::make_shared<detail::ResidualProblem>();
  problem->fn = residual;
  problem->options = options;
  for (const at::Tensor& p : params) problem->params.push_back(p.detach());
  at::Tensor f0 = problem->eval(u0.detach());
  TESSERA_CHECK(f0.sizes() == u0.sizes(), DimensionMismatch, "nonlinear_solve: F(u0) has shape ", f0.sizes(),
                " but u0 has shape ", u0.sizes());
  TESSERA_CHECK(at::isfinite(f0).all().item<bool>(), InvalidInput, "nonlinear_solve: F(u0) contains NaN or Inf");
  NonlinearInfo info;
  at::Tensor u = options.anderson ? detail::anderson(*problem, u0, info) : detail::newton(*problem, u0, info);
  info.residual_evaluations = problem->evaluations;
  info.colors = problem->colors;
  at::Tensor out = detail::implicit_solution(params, u, problem);
  return {out, info};
}

}  // namespace tessera::sla
