// Autograd Function of eigsh: dλ_i/dA = v_i v_i^T and dL/dA = -w v^T for eigenvectors,
// sampled on the stored pattern.

#include "sla/autograd/eigsh_function.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cmath>

#include "sla/backends/native/krylov.h"
#include "sla/kernels/csr_kernels.h"
#include "tessera/core/error.h"

namespace tessera::sla::detail {
namespace {

/// dL/dA from dL/dv_i for the simple eigenpair (λ_i, v_i): w solves
/// (A - λ_i I + c v_i v_i^T) w = (I - v_i v_i^T) g  (the deflated matrix is nonsingular when
/// λ_i is simple, and w ⟂ v_i), then dL/dA = -w v_i^T on the pattern.
at::Tensor eigenvector_grad(const SparseTensor& a, const at::Tensor& lambda, const at::Tensor& vectors, int64_t i,
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
  at::Tensor v = vectors.select(1, i).contiguous();
  const LinearOperator av = csr_operator(a, 0, false);
  const double c = scale;
  LinearOperator shifted = [&](const at::Tensor& w) {
    return av(w) - li * w + c * v * at::dot(v, w);   // (A - λ I + c v v^T) w
  };
  at::Tensor rhs = g - v * at::dot(v, g);             // (I - v v^T) g
  SolveOptions opts;
  opts.method = Method::MINRES;
  opts.preconditioner = Preconditioner::None;
  opts.rtol = 1e-13;
  SolveInfo info;
  at::Tensor w = krylov_solve(shifted, at::ones_like(v), rhs, opts, info);
  TESSERA_CHECK(info.status == SolveStatus::Converged || info.residual < 1e-9, Unsupported,
                "eigsh backward: the eigenvector solve for λ = ", li, " did not converge (", to_string(info.status),
                ", relative residual ", info.residual, "); the eigenvalue may not be well separated");
  w = w - v * at::dot(v, w);                          // stay ⟂ v
  // dL/dA_ab = -w_a v_b on the pattern
  return -csr_sampled_dot(a.row_ptr(), a.col_idx(), w.reshape({1, -1, 1}), v.reshape({1, -1, 1})).reshape({-1});
}

struct Holder : public torch::CustomClassHolder {
  explicit Holder(SparseTensor a) : a(std::move(a)) {}
  SparseTensor a;
};

struct EigshFunction : public torch::autograd::Function<EigshFunction> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const at::Tensor& values,
                                                const at::Tensor& lambda, const at::Tensor& vectors,
                                                const SparseTensor& a) {
    ctx->save_for_backward({lambda, vectors});
    ctx->saved_data["a"] = c10::IValue::make_capsule(c10::make_intrusive<Holder>(a));
    return {lambda.to(values.scalar_type()).clone(), vectors.to(values.scalar_type()).clone()};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const SparseTensor& a = static_cast<Holder*>(ctx->saved_data["a"].toCapsule().get())->a;
    at::Tensor gl = grads[0].defined() ? grads[0].to(at::kDouble) : at::Tensor();
    at::Tensor gv = grads[1].defined() ? grads[1].to(at::kDouble) : at::Tensor();
    at::Tensor g = eigsh_backward(a, saved[0], saved[1], gl, gv);
    return {g.to(grads[0].defined() ? grads[0].scalar_type() : grads[1].scalar_type()), at::Tensor(), at::Tensor(),
            at::Tensor()};
  }
};

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
  auto out = EigshFunction::apply(values, lambda, vectors, a);
  return {out[0], out[1]};
}

}  // namespace tessera::sla::detail
