// Autograd Function of deigsh: dλ_i/dA = v_i v_i^T and dL/dA = -w v^T for eigenvectors,
// sampled on each rank's stored entries (v of halo columns by a halo exchange).

#include "sla/dist/autograd/deigsh_function.h"

#include <ATen/ATen.h>

#include "sla/autograd/eigenpair_function.h"
#include "sla/autograd/eigenvector_adjoint.h"
#include "sla/dist/autograd/halo_exchange.h"
#include "sla/dist/distributed_space.h"

namespace tessera::sla::detail {
namespace {

/// Rows of V on this rank's owned then halo columns: [owned + halo, k].
at::Tensor with_halo(const DSparseTensor& a, const at::Tensor& v) {
  return at::cat({v, halo_forward_raw(*a.comm(), a.plan(), v.contiguous())}, 0);
}

/// dL/dA = -w v_i^T on this rank's stored entries from dL/dv_i = g (w: eigenvector_adjoint by
/// distributed MINRES; v_b of halo columns by a halo exchange).
at::Tensor eigenvector_grad(const DSparseTensor& a, const at::Tensor& lambda, const at::Tensor& vectors, int64_t i,
                            const at::Tensor& g) {
  const LinearOperator av = [&a](const at::Tensor& w) { return a.matvec(w); };
  const at::Tensor w = eigenvector_adjoint(av, lambda, vectors, i, g, distributed_krylov_space(a));
  // dL/dA_ab = -w_a v_b on the pattern
  at::Tensor v_ext = with_halo(a, vectors.select(1, i).contiguous());
  return -(w.index_select(0, a.local_rows_index()) * v_ext.index_select(0, a.local_cols_index()));
}

}  // namespace

at::Tensor deigsh_backward(const DSparseTensor& a, const at::Tensor& lambda, const at::Tensor& vectors,
                           const at::Tensor& grad_lambda, const at::Tensor& grad_vectors) {
  at::NoGradGuard no_grad;
  at::Tensor gl = grad_lambda.contiguous().clone();
  a.comm()->all_reduce(gl, dist::ReduceOp::Sum);             // λ is every rank's: dL/dλ = sum_r dL_r/dλ
  // dλ_i/dA_ab = v_ia v_ib: sum_i gλ_i v_ia v_ib on the pattern
  at::Tensor v_ext = with_halo(a, vectors);
  at::Tensor grad = (vectors.index_select(0, a.local_rows_index()) * gl.unsqueeze(0) *
                     v_ext.index_select(0, a.local_cols_index()))
                        .sum(1);
  // the eigenvectors that enter some rank's loss
  at::Tensor used = grad_vectors.numel() ? grad_vectors.abs().amax(0) : at::zeros({vectors.size(1)}, at::kDouble);
  used = used.contiguous();
  a.comm()->all_reduce(used, dist::ReduceOp::Max);
  for (int64_t i = 0; i < vectors.size(1); ++i) {
    if (!(used[i].item<double>() > 0)) continue;
    grad += eigenvector_grad(a, lambda, vectors, i, grad_vectors.select(1, i).contiguous());
  }
  return grad;
}

std::pair<at::Tensor, at::Tensor> deigsh_autograd(const DSparseTensor& a, const at::Tensor& values,
                                                  const at::Tensor& lambda, const at::Tensor& vectors) {
  auto out = EigenpairFunction<DSparseTensor, deigsh_backward>::apply(values, lambda, vectors, a);
  return {out[0], out[1]};
}

}  // namespace tessera::sla::detail
