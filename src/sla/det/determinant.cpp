// slogdet / logdet / det: checks, backend choice per batch element, and the autograd
// Function whose backward is the selected inverse (sla/det/ldu.h).

#include "tessera/sla/determinant.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cmath>
#include <limits>

#include "sla/det/factor_logdet.h"
#include "sla/det/ldu.h"
#include "tessera/core/error.h"
#include "tessera/sla/solve.h"

namespace tessera::sla {
namespace {

int severity(SolveStatus s) { return s == SolveStatus::Converged ? 0 : s == SolveStatus::Singular ? 2 : 1; }

detail::LogdetValue logdet_one(const SparseTensor& a, int64_t index, const DetOptions& o) {
  const CsrMatrix csr = a.to_csr_matrix(index);
  if (o.backend == Backend::Umfpack) return detail::umfpack_logdet(csr);
  const MatrixProperties props = detect_properties(a, index);
  if (o.backend == Backend::Cholmod) {
    TESSERA_CHECK(props.symmetric, InvalidInput, "logdet: backend cholmod needs a symmetric matrix");
    return detail::cholmod_logdet(csr);
  }
  if (props.spd_candidate()) {
    detail::LogdetValue v = detail::cholmod_logdet(csr);
    if (v.status == SolveStatus::Converged) return v;
    detail::LogdetValue lu = detail::umfpack_logdet(csr);
    if (lu.message.empty()) lu.message = "Cholesky failed (not positive definite); used LU";
    return lu;
  }
  return detail::umfpack_logdet(csr);
}

/// d log|det A| / dA = A^{-T} on the pattern, for every batch element: one symbolic
/// analysis for the shared pattern, then LDU + Takahashi per element.
at::Tensor logabsdet_backward(const SparseTensor& a, const at::Tensor& grad) {
  const int64_t batch = a.batch_size();
  const detail::LduSymbolic sym = detail::ldu_analyze(a.to_csr_matrix(0));
  at::Tensor out = at::empty({batch, a.nnz()}, at::kDouble);
  at::Tensor g = grad.to(at::kDouble).reshape({batch});
  for (int64_t b = 0; b < batch; ++b) {
    const CsrMatrix csr = a.to_csr_matrix(b);
    const detail::LduNumeric num = detail::ldu_factorize(sym, csr);
    TESSERA_CHECK(num.ok, Unsupported, "logdet backward: the unpivoted LDU used for the selected inverse met a ",
                  "(near-)zero pivot at step ", num.failed_pivot, " (batch element ", b,
                  "); the matrix is singular or needs pivoting");
    const detail::SelectedInverse z = detail::selected_inverse(sym, num);
    out[b] = detail::inverse_transpose_on_pattern(sym, z) * g[b];   // dL/dA_ij = g (A^{-T})_ij
  }
  return out;
}

struct Holder : public torch::CustomClassHolder {
  explicit Holder(SparseTensor a) : a(std::move(a)) {}
  SparseTensor a;
};

struct LogabsdetFunction : public torch::autograd::Function<LogabsdetFunction> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& values,
                            const at::Tensor& logabsdet, const SparseTensor& a) {
    ctx->saved_data["a"] = c10::IValue::make_capsule(c10::make_intrusive<Holder>(a));
    return logabsdet.to(values.scalar_type()).clone();
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const SparseTensor& a = static_cast<Holder*>(ctx->saved_data["a"].toCapsule().get())->a;
    at::Tensor g = logabsdet_backward(a, grads[0]);
    return {g.reshape({a.batch_size(), a.nnz()}).to(grads[0].scalar_type()), at::Tensor(), at::Tensor()};
  }
};

void check_inputs(const SparseTensor& a) {
  TESSERA_CHECK(a.rows() == a.cols(), DimensionMismatch, "logdet: A must be square, got ", a.rows(), " x ",
                a.cols());
  TESSERA_CHECK(a.rows() > 0 && a.nnz() > 0, InvalidInput, "logdet: empty matrix (", a.rows(), " x ", a.cols(),
                ", ", a.nnz(), " stored entries)");
  TESSERA_CHECK(at::isfinite(a.values().detach()).all().item<bool>(), InvalidInput,
                "logdet: A's values contain NaN or Inf");
}

}  // namespace

SlogdetResult slogdet(const SparseTensor& a, const DetOptions& options) {
  check_inputs(a);
  TESSERA_CHECK(options.backend == Backend::Auto || options.backend == Backend::Cholmod ||
                    options.backend == Backend::Umfpack,
                InvalidInput, "logdet: backend '", to_string(options.backend), "' has no determinant (auto, cholmod, umfpack)");
  const SparseTensor a64 = a.with_values(a.values().detach().to(at::kCPU, at::kDouble));
  const int64_t batch = a.batch_size();
  at::Tensor sign = at::empty({batch}, at::kDouble), lad = at::empty({batch}, at::kDouble);
  SlogdetResult r;
  for (int64_t b = 0; b < batch; ++b) {
    const detail::LogdetValue v = logdet_one(a64, b, options);
    sign[b] = v.sign;
    lad[b] = v.logabsdet;
    if (b == 0 || severity(v.status) > severity(r.info.status)) {
      r.info.status = v.status;
      r.info.message = v.message;
    }
    r.info.backend = v.backend;
    r.info.method = v.method;
  }
  const std::vector<int64_t> shape = a.batch_shape();
  at::Tensor out = LogabsdetFunction::apply(a.values().reshape({batch, a.nnz()}), lad, a64);
  r.sign = sign.to(a.dtype()).reshape(shape);
  r.logabsdet = out.reshape(shape);
  return r;
}

std::pair<at::Tensor, DetInfo> logdet(const SparseTensor& a, const DetOptions& options) {
  SlogdetResult r = slogdet(a, options);
  if ((r.sign < 0).any().item<bool>() && r.info.status == SolveStatus::Converged) {
    r.info.status = SolveStatus::NotPositiveDefinite;
    r.info.message = "logdet: det A < 0, so log det A is NaN; use slogdet for sign and log|det A|";
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // log det = log|det| where det > 0, NaN where det < 0 (-inf where singular)
  at::Tensor value = at::where(r.sign < 0, at::full_like(r.logabsdet, nan), r.logabsdet);
  return {value, r.info};
}

std::pair<at::Tensor, DetInfo> det(const SparseTensor& a, const DetOptions& options) {
  SlogdetResult r = slogdet(a, options);
  return {r.sign * at::exp(r.logabsdet), r.info};   // det = sign exp(log|det|)
}

}  // namespace tessera::sla
