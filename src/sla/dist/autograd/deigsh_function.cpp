// Autograd Function of deigsh: dλ_i/dA = v_i v_i^T and dL/dA = -w v^T for eigenvectors,
// sampled on each rank's stored entries (v of halo columns by a halo exchange).

#include "sla/dist/autograd/deigsh_function.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>

#include "sla/dist/autograd/halo_exchange.h"
#include "sla/dist/distributed_space.h"
#include "tessera/core/error.h"

namespace tessera::sla::detail {
namespace {

/// Rows of V on this rank's owned then halo columns: [owned + halo, k].
at::Tensor with_halo(const DSparseTensor& a, const at::Tensor& v) {
  return at::cat({v, halo_forward_raw(*a.comm(), a.plan(), v.contiguous())}, 0);
}

/// dL/dA on the pattern from dL/dv_i for the simple eigenpair (λ_i, v_i): w solves
/// (A - λ_i I + c v_i v_i^T) w = (I - v_i v_i^T) g by distributed MINRES, then
/// dL/dA_ab = -w_a v_b.
at::Tensor eigenvector_grad(const DSparseTensor& a, const at::Tensor& lambda, const at::Tensor& vectors, int64_t i,
                            const at::Tensor& g) {
  const double li = lambda[i].item<double>();
  const double scale = std::max(1.0, lambda.abs().max().item<double>());
  if (lambda.size(0) > 1) {
    at::Tensor others = at::cat({lambda.narrow(0, 0, i), lambda.narrow(0, i + 1, lambda.size(0) - i - 1)});
    const double gap = (others - li).abs().min().item<double>();
    TESSERA_CHECK(gap > 1e-8 * scale, Unsupported, "eigsh backward: eigenvalue ", li, " is within ", gap,
                  " of another computed eigenvalue; the eigenvector gradient of a (near-)multiple eigenvalue is "
                  "not defined");
  }
  const KrylovSpace space = distributed_krylov_space(a);
  at::Tensor v = vectors.select(1, i).contiguous();
  const double c = scale;
  LinearOperator shifted = [&](const at::Tensor& w) {
    return a.matvec(w) - li * w + c * v * space.dot(v, w);   // (A - λ I + c v v^T) w
  };
  at::Tensor rhs = g - v * space.dot(v, g);                  // (I - v v^T) g
  SolveOptions opts;
  opts.method = Method::MINRES;
  opts.preconditioner = Preconditioner::None;
  opts.rtol = 1e-13;
  SolveInfo info;
  at::Tensor w = krylov_solve(shifted, at::ones_like(v), rhs, opts, info, &space);
  TESSERA_CHECK(info.status == SolveStatus::Converged || info.residual < 1e-9, Unsupported,
                "eigsh backward: the eigenvector solve for λ = ", li, " did not converge (", to_string(info.status),
                ", relative residual ", info.residual, "); the eigenvalue may not be well separated");
  w = w - v * space.dot(v, w);                               // stay ⟂ v
  // dL/dA_ab = -w_a v_b on the pattern
  at::Tensor v_ext = with_halo(a, v);
  return -(w.index_select(0, a.local_rows_index()) * v_ext.index_select(0, a.local_cols_index()));
}

struct Holder : public torch::CustomClassHolder {
  explicit Holder(DSparseTensor a) : a(std::move(a)) {}
  DSparseTensor a;
};

struct DEigshFunction : public torch::autograd::Function<DEigshFunction> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const at::Tensor& values,
                                                const at::Tensor& lambda, const at::Tensor& vectors,
                                                const DSparseTensor& a) {
    ctx->save_for_backward({lambda, vectors});
    ctx->saved_data["a"] = c10::IValue::make_capsule(c10::make_intrusive<Holder>(a));
    return {lambda.to(values.scalar_type()).clone(), vectors.to(values.scalar_type()).clone()};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const DSparseTensor& a = static_cast<Holder*>(ctx->saved_data["a"].toCapsule().get())->a;
    // undefined gradients are materialised as zeros, so every rank takes the same path
    at::Tensor g = deigsh_backward(a, saved[0], saved[1], grads[0].to(at::kDouble), grads[1].to(at::kDouble));
    return {g.to(grads[0].scalar_type()), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

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
  auto out = DEigshFunction::apply(values, lambda, vectors, a);
  return {out[0], out[1]};
}

}  // namespace tessera::sla::detail
