// Autograd Function of x = A^{-1} b: the backward pass is ONE adjoint solve A^T λ = g with
// the forward's BatchSolver (same factorisation, or same Krylov method and preconditioner).

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/custom_function.h>

#include "sla/autograd/solve_function.h"
#include "sla/kernels/csr_kernels.h"
#include "sla/autograd/csr_functions.h"

namespace tessera::sla::detail {
namespace {

struct SolverHolder : public torch::CustomClassHolder {
  explicit SolverHolder(std::shared_ptr<BatchSolver> s) : solver(std::move(s)) {}
  std::shared_ptr<BatchSolver> solver;
};

struct SolveFunction : public torch::autograd::Function<SolveFunction> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& values, const at::Tensor& b,
                            const std::shared_ptr<BatchSolver>& solver, SolveInfo* info) {
    at::Tensor x = solver->solve(b, /*transpose=*/false, *info).to(values.scalar_type());   // x = A^{-1} b
    ctx->saved_data["solver"] = c10::IValue::make_capsule(c10::make_intrusive<SolverHolder>(solver));
    ctx->saved_data["b_batch"] = b.size(0);
    ctx->save_for_backward({x});
    return x;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto solver = static_cast<SolverHolder*>(ctx->saved_data["solver"].toCapsule().get())->solver;
    const at::Tensor x = ctx->get_saved_variables()[0];
    const at::Tensor g = grads[0];
    SolveInfo adjoint;
    at::Tensor lambda = solver->solve(g, /*transpose=*/true, adjoint).to(g.scalar_type());   // A^T λ = g
    if (adjoint.status != SolveStatus::Converged) {
      TORCH_WARN("tessera::sla::solve backward: the adjoint solve A^T λ = g ended with status '",
                 to_string(adjoint.status), "' (relative residual ", adjoint.residual, "); gradients are inaccurate");
    }
    at::Tensor grad_values, grad_b;
    const SparseTensor& a = solver->matrix();
    // dL/dA_ij = -λ_i x_j, only for stored (i, j)
    if (ctx->needs_input_grad(0)) grad_values = -csr_sampled_dot(a.row_ptr(), a.col_idx(), lambda, x);
    if (ctx->needs_input_grad(1)) grad_b = reduce_to_batch(lambda, ctx->saved_data["b_batch"].toInt());   // dL/db = λ
    return {grad_values, grad_b, at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor solve_autograd(const at::Tensor& values, const at::Tensor& b, const std::shared_ptr<BatchSolver>& solver,
                          SolveInfo& info) {
  return SolveFunction::apply(values, b, solver, &info);
}

}  // namespace tessera::sla::detail
