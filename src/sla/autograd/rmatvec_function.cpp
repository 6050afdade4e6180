// Autograd Function of y = A^T x on a CSR pattern.

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "sla/autograd/csr_functions.h"
#include "sla/kernels/csr_kernels.h"

namespace tessera::sla::detail {
namespace {

struct SparseHolder : public torch::CustomClassHolder {
  explicit SparseHolder(SparseTensor a) : a(std::move(a)) {}
  SparseTensor a;
};

struct RmatvecFunction : public torch::autograd::Function<RmatvecFunction> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& values, const at::Tensor& x,
                            const SparseTensor& a) {
    ctx->save_for_backward({values, x});
    ctx->saved_data["a"] = c10::IValue::make_capsule(c10::make_intrusive<SparseHolder>(a));
    const TransposedPattern& tp = a.transposed_pattern();
    return csr_spmm(tp.row_ptr, tp.col_idx, tp.perm, values, x, a.cols());   // y = A^T x
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const at::Tensor& values = saved[0];
    const at::Tensor& x = saved[1];
    const SparseTensor& a = static_cast<SparseHolder*>(ctx->saved_data["a"].toCapsule().get())->a;
    at::Tensor g = grads[0].contiguous();
    at::Tensor grad_values, grad_x;
    // y(j) = sum_i A(i, j) x(i): dL/dA(i, j) = x(i) . g(j) on the pattern
    if (ctx->needs_input_grad(0)) grad_values = reduce_to_batch(matvec_grad_values(a, x, g), values.size(0));
    // dL/dx = A g
    if (ctx->needs_input_grad(1)) {
      grad_x = at::GradMode::is_enabled() ? matvec_autograd(a, values, g)   // differentiable when create_graph
                                          : csr_spmm(a.row_ptr(), a.col_idx(), {}, values, g, a.rows());
      grad_x = reduce_to_batch(grad_x, x.size(0));
    }
    return {grad_values, grad_x, at::Tensor()};
  }
};

}  // namespace

at::Tensor rmatvec_autograd(const SparseTensor& a, const at::Tensor& values, const at::Tensor& x) {
  return RmatvecFunction::apply(values, x, a);
}

}  // namespace tessera::sla::detail
