#pragma once
// One autograd Function for eigsh's eigenpairs, whatever holds the matrix: a SparseTensor
// (eigsh) or a DSparseTensor (deigsh). Its input is the matrix's values; its outputs are
// λ [k] and V [rows, k]; its backward is `Backward`, an op tested on its own.
//
//   auto out = EigenpairFunction<SparseTensor, eigsh_backward>::apply(values, lambda, vectors, a);

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <utility>

namespace tessera::sla::detail {

/// dL/dvalues (float64) from the float64 eigenpairs and dL/dλ, dL/dV (zeros where the loss
/// does not use them: the Function materialises undefined gradients, so every rank of a
/// distributed matrix takes the same path).
template <typename Matrix>
using EigenpairBackward = at::Tensor (*)(const Matrix& a, const at::Tensor& lambda, const at::Tensor& vectors,
                                         const at::Tensor& grad_lambda, const at::Tensor& grad_vectors);

template <typename Matrix, EigenpairBackward<Matrix> Backward>
struct EigenpairFunction : public torch::autograd::Function<EigenpairFunction<Matrix, Backward>> {
  struct Holder : public torch::CustomClassHolder {
    explicit Holder(Matrix a) : a(std::move(a)) {}
    Matrix a;
  };

  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const at::Tensor& values,
                                                const at::Tensor& lambda, const at::Tensor& vectors, const Matrix& a) {
    ctx->save_for_backward({lambda, vectors});
    ctx->saved_data["a"] = c10::IValue::make_capsule(c10::make_intrusive<Holder>(a));
    return {lambda.to(values.scalar_type()).clone(), vectors.to(values.scalar_type()).clone()};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const Matrix& a = static_cast<Holder*>(ctx->saved_data["a"].toCapsule().get())->a;
    at::Tensor g = Backward(a, saved[0], saved[1], grads[0].to(at::kDouble), grads[1].to(at::kDouble));
    return {g.to(grads[0].scalar_type()), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace tessera::sla::detail
