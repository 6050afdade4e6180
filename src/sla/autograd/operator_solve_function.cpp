// Autograd Function of x = A(θ)^{-1} b for a user operator: the backward pass is ONE adjoint
// solve A^T λ = g and ONE vector-Jacobian product through the user's apply.

#include "sla/autograd/operator_solve_function.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/custom_function.h>

namespace tessera::sla::detail {
namespace {

struct ProblemHolder : public torch::CustomClassHolder {
  explicit ProblemHolder(std::shared_ptr<OperatorProblem> p) : problem(std::move(p)) {}
  std::shared_ptr<OperatorProblem> problem;
};

// Inputs: the parameters (one input each), b, the problem, the info to fill.
struct OperatorSolveFunction : public torch::autograd::Function<OperatorSolveFunction> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, at::TensorList params, const at::Tensor& b,
                            const std::shared_ptr<OperatorProblem>& problem, SolveInfo* info) {
    at::Tensor x = problem->solve(b, /*transpose=*/false, *info);   // x = A^{-1} b
    ctx->saved_data["problem"] = c10::IValue::make_capsule(c10::make_intrusive<ProblemHolder>(problem));
    ctx->saved_data["count"] = static_cast<int64_t>(params.size());
    ctx->save_for_backward({x});
    return x;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto problem = static_cast<ProblemHolder*>(ctx->saved_data["problem"].toCapsule().get())->problem;
    const int64_t count = ctx->saved_data["count"].toInt();
    const at::Tensor x = ctx->get_saved_variables()[0];
    const at::Tensor g = grads[0].defined() ? grads[0].to(x.scalar_type()) : at::zeros_like(x);
    SolveInfo adjoint;
    const at::Tensor lambda = problem->solve(g, /*transpose=*/true, adjoint);   // A^T λ = g
    if (adjoint.status != SolveStatus::Converged) {
      TORCH_WARN("tessera::sla::solve_operator backward: the adjoint solve A^T λ = g ended with status '",
                 to_string(adjoint.status), "' (relative residual ", adjoint.residual, "); gradients are inaccurate");
    }
    torch::autograd::variable_list out(count + 3);
    std::vector<bool> wanted(count);
    for (int64_t i = 0; i < count; ++i) wanted[i] = ctx->needs_input_grad(i);
    std::vector<at::Tensor> dparams = problem->params_vjp(x, lambda, wanted);   // -∂/∂θ <λ, A(θ) x>
    for (int64_t i = 0; i < count; ++i) out[i] = dparams[i];
    if (ctx->needs_input_grad(count)) out[count] = lambda;                      // dL/db = λ
    return out;
  }
};

}  // namespace

at::Tensor operator_solve_autograd(const std::vector<at::Tensor>& params, const at::Tensor& b,
                                   const std::shared_ptr<OperatorProblem>& problem, SolveInfo& info) {
  return OperatorSolveFunction::apply(at::TensorList(params), b, problem, &info);
}

}  // namespace tessera::sla::detail
