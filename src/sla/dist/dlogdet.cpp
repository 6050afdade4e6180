// dslogdet / dlogdet: MUMPS's LU with its determinant, and the autograd Function whose
// backward is MUMPS's selected inversion (A^{-1})_ji on each rank's stored entries.

#include "tessera/sla/dist/dlogdet.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <limits>
#include <memory>

#include "sla/backends/mumps/dist_mumps.h"
#include "tessera/core/error.h"

namespace tessera::sla {
namespace {

struct Holder : public torch::CustomClassHolder {
  Holder(DSparseTensor a, std::shared_ptr<detail::DistDirectFactorization> lu) : a(std::move(a)), lu(std::move(lu)) {}
  DSparseTensor a;
  std::shared_ptr<detail::DistDirectFactorization> lu;
};

/// d log|det A| / dA_ij = (A^{-1})_ji for this rank's stored (i, j) (collective).
at::Tensor logabsdet_backward(const DSparseTensor& a, detail::DistDirectFactorization& lu, const at::Tensor& grad) {
  TESSERA_CHECK(lu.null_pivots() == 0, Unsupported, "logdet backward: A is singular (", lu.null_pivots(),
                " null pivots); log|det A| has no gradient");
  at::Tensor g = grad.to(at::kDouble).reshape({1}).contiguous().clone();
  a.comm()->all_reduce(g, dist::ReduceOp::Sum);   // the value is every rank's: dL/dv = sum_r dL_r/dv
  const at::Tensor& global = a.plan().local_to_global;
  at::Tensor i = global.index_select(0, a.local_rows_index());
  at::Tensor j = global.index_select(0, a.local_cols_index());
  return lu.inverse_entries(j, i) * g;            // (A^{-T})_ij = (A^{-1})_ji
}

struct DLogabsdetFunction : public torch::autograd::Function<DLogabsdetFunction> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& values, double logabsdet,
                            const DSparseTensor& a, const std::shared_ptr<detail::DistDirectFactorization>& lu) {
    ctx->saved_data["a"] = c10::IValue::make_capsule(c10::make_intrusive<Holder>(a, lu));
    return at::full({}, logabsdet, values.options().requires_grad(false));
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto* h = static_cast<Holder*>(ctx->saved_data["a"].toCapsule().get());
    at::Tensor g = logabsdet_backward(h->a, *h->lu, grads[0]);
    return {g.to(grads[0].scalar_type()), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

SlogdetResult dslogdet(const DSparseTensor& a, const DetOptions& options) {
  TESSERA_CHECK(options.backend == Backend::Auto || options.backend == Backend::Mumps, Unsupported,
                "logdet across ranks uses MUMPS; backend '", to_string(options.backend), "' is single-process");
  at::Tensor bad = at::full({1}, static_cast<int32_t>(!at::isfinite(a.values().detach()).all().item<bool>()), at::kInt);
  a.comm()->all_reduce(bad, dist::ReduceOp::Max);   // every rank throws alike
  TESSERA_CHECK(bad.item<int32_t>() == 0, InvalidInput, "logdet: A's values contain NaN or Inf (on some rank)");
  const DSparseTensor a64 = a.with_values(a.values().detach().to(at::kDouble));
  detail::DistFactorOptions fo;
  fo.determinant = true;
  fo.allow_singular = true;
  std::shared_ptr<detail::DistDirectFactorization> lu = detail::factorize_distributed_mumps(a64, fo);   // collective
  auto [sign, logabsdet] = lu->slogdet();   // det A = m 2^e
  SlogdetResult r;
  r.info.backend = to_string(Backend::Mumps);
  r.info.method = Method::LU;
  if (lu->null_pivots() > 0) {
    r.info.status = SolveStatus::Singular;
    r.info.message = "logdet: A is singular (MUMPS found " + std::to_string(lu->null_pivots()) + " null pivots)";
  }
  r.sign = at::full({}, sign, a.values().options().requires_grad(false));
  r.logabsdet = DLogabsdetFunction::apply(a.values(), logabsdet, a64, lu);
  return r;
}

std::pair<at::Tensor, DetInfo> dlogdet(const DSparseTensor& a, const DetOptions& options) {
  SlogdetResult r = dslogdet(a, options);
  if (r.sign.item<double>() < 0 && r.info.status == SolveStatus::Converged) {
    r.info.status = SolveStatus::NotPositiveDefinite;
    r.info.message = "logdet: det A < 0, so log det A is NaN; use slogdet for sign and log|det A|";
  }
  // log det = log|det| where det > 0, NaN where det < 0 (-inf where singular)
  at::Tensor value = at::where(r.sign < 0, at::full_like(r.logabsdet, std::numeric_limits<double>::quiet_NaN()),
                               r.logabsdet);
  return {value, r.info};
}

}  // namespace tessera::sla
