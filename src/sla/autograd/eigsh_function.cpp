// Autograd Function of eigsh: dλ_i/dA = v_i v_i^T and dL/dA = -w v^T for eigenvectors,
// sampled on the stored pattern.

#include "sla/autograd/eigsh_function.h"

#include <ATen/ATen.h>

#include "sla/autograd/eigenpair_function.h"
#include "sla/autograd/eigenvector_adjoint.h"
#include "sla/backends/native/krylov.h"
#include "sla/kernels/csr_kernels.h"

namespace tessera::sla::detail {
namespace {

/// dL/dA = -w v_i^T on the pattern from dL/dv_i = g (w: eigenvector_adjoint).
at::Tensor eigenvector_grad(const SparseTensor& a, const at::Tensor& lambda, const at::Tensor& vectors, int64_t i,
                            const at::Tensor& g) {
  const at::Tensor w = eigenvector_adjoint(csr_operator(a, 0, false), lambda, vectors, i, g, KrylovSpace::local(a.rows()));
  const at::Tensor v = vectors.select(1, i).contiguous();
  // dL/dA_ab = -w_a v_b on the pattern
  return -csr_sampled_dot(a.row_ptr(), a.col_idx(), w.reshape({1, -1, 1}), v.reshape({1, -1, 1})).reshape({-1});
}

}  // namespace

at::Tensor eigsh_backward(const SparseTensor& a, const at::Tensor& lambda, const at::Tensor& vectors,
                          const at::Tensor& grad_lambda, const at::Tensor& grad_vectors) {
  at::Tensor grad = at::zeros({a.nnz()}, at::kDouble);
  if (grad_lambda.defined()) {
    // dλ_i/dA_ab = v_ia v_ib: sum_i gλ_i v_ia v_ib on the pattern
    at::Tensor left = (vectors * grad_lambda.unsqueeze(0)).unsqueeze(0);
    grad += csr_sampled_dot(a.row_ptr(), a.col_idx(), left, vectors.unsqueeze(0)).reshape({-1});
  }
  if (grad_vectors.defined()) {
    for (int64_t i = 0; i < vectors.size(1); ++i) {
      at::Tensor g = grad_vectors.select(1, i).contiguous();
      if (!g.abs().max().item<double>()) continue;   // this eigenvector does not enter the loss
      grad += eigenvector_grad(a, lambda, vectors, i, g);
    }
  }
  return grad;
}

std::pair<at::Tensor, at::Tensor> eigsh_autograd(const SparseTensor& a, const at::Tensor& values,
                                                 const at::Tensor& lambda, const at::Tensor& vectors) {
  auto out = EigenpairFunction<SparseTensor, eigsh_backward>::apply(values, lambda, vectors, a);
  return {out[0], out[1]};
}

}  // namespace tessera::sla::detail
