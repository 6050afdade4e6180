// Autograd Function of y = A x on a CSR pattern.

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "sla/autograd/csr_functions.h"
#include "sla/kernels/csr_kernels.h"

namespace tessera::sla::detail {

at::Tensor matvec_grad_values(const SparseTensor& a, const at::Tensor& grad_y, const at::Tensor& x) {
  // dL/dA(i, j) = sum_k dL/dy(i, k) x(j, k), only where (i, j) is stored
  return csr_sampled_dot(a.row_ptr(), a.col_idx(), grad_y, x);
}

at::Tensor reduce_to_batch(const at::Tensor& grad, int64_t batch) {
  return (batch == 1 && grad.size(0) != 1) ? grad.sum(0, /*keepdim=*/true) : grad;
}

namespace {

struct MatvecFunction : public torch::autograd::Function<MatvecFunction> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& values, const at::Tensor& x,
                            const SparseTensor& a) {
    ctx->save_for_backward({values, x});
    ctx->saved_data["a"] = c10::IValue::make_capsule(c10::make_intrusive<SparseHolder>(a));
    return csr_spmm(a.row_ptr(), a.col_idx(), {}, values, x, a.rows());   // y = A x
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const at::Tensor& values = saved[0];
    const at::Tensor& x = saved[1];
    const SparseTensor& a = static_cast<SparseHolder*>(ctx->saved_data["a"].toCapsule().get())->a;
    at::Tensor g = grads[0].contiguous();
    at::Tensor grad_values, grad_x;
    if (ctx->needs_input_grad(0)) grad_values = reduce_to_batch(matvec_grad_values(a, g, x), values.size(0));
    if (ctx->needs_input_grad(1)) {
      const TransposedPattern& tp = a.transposed_pattern();
      // dL/dx = A^T g; through the autograd op when the backward is itself differentiated
      // (create_graph, e.g. Jacobian-vector products by double backward)
      grad_x = at::GradMode::is_enabled() ? rmatvec_autograd(a, values, g)
                                          : csr_spmm(tp.row_ptr, tp.col_idx, tp.perm, values, g, a.cols());
      grad_x = reduce_to_batch(grad_x, x.size(0));
    }
    return {grad_values, grad_x, at::Tensor()};
  }

  struct SparseHolder : public torch::CustomClassHolder {
    explicit SparseHolder(SparseTensor a) : a(std::move(a)) {}
    SparseTensor a;
  };
};

}  // namespace

at::Tensor matvec_autograd(const SparseTensor& a, const at::Tensor& values, const at::Tensor& x) {
  return MatvecFunction::apply(values, x, a);
}

}  // namespace tessera::sla::detail
