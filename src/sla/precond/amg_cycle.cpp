// The V-cycle of the smoothed-aggregation hierarchy, in ATen ops (any device), on vectors the
// hierarchy keeps between cycles.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <omp.h>

#include <algorithm>

#include "sla/precond/amg.h"
#include "sla/precond/row_view.h"
#include "tessera/core/error.h"

namespace tessera::sla::detail {
namespace {

// Row-by-row kernels that spare the cycle a vector of the level (A d, the residual, P e_c):
// each row's product is formed as the SpMV kernels form it (from 0, terms in column order)
// and then combined as the separate tensor operations combined it, so the results are the
// same bits. CPU float64 with the CSR or stencil rows of a level; `raw` says when they apply.

bool raw(const CsrData& a, std::initializer_list<const at::Tensor*> vs) {
  if (!a.plan && !a.matrix_free()) return false;
  if (!a.matrix_free() && (!a.values.defined() || !a.values.is_cpu())) return false;
  for (const at::Tensor* v : vs) {
    if (!v->is_cpu() || v->scalar_type() != at::kDouble || !v->is_contiguous()) return false;
  }
  return true;
}

/// Rows run in parallel above this many (as the products: 2^16 multiply-adds).
bool parallel_rows(const CsrData& a) { return a.nnz() >= (int64_t{1} << 16); }

/// r -= D^{-1} (A d): the Chebyshev step's residual update without A d stored.
void residual_step(const CsrData& a, const at::Tensor& d, const at::Tensor& inv_diag, at::Tensor& r) {
  const double* dp = d.data_ptr<double>();
  const double* di = inv_diag.data_ptr<double>();
  const int64_t ds = inv_diag.stride(0);
  double* rp = r.data_ptr<double>();
  const int64_t n = a.rows;
  with_rows(a, [&](const auto& rows) {
#pragma omp parallel for schedule(static) if (parallel_rows(a))
    for (int64_t i = 0; i < n; ++i) {
      double s = 0;
      rows.for_each(i, [&](int64_t j, double v) { s += v * dp[j]; });        // (A d)_i
      const double t = s * di[i * ds];                                       // (D^{-1} A d)_i
      rp[i] -= t;
    }
  });
}

/// x += P e (P e not stored).
void add_product(const CsrData& p, const at::Tensor& e, at::Tensor& x) {
  const double* ep = e.data_ptr<double>();
  double* xp = x.data_ptr<double>();
  const int64_t n = p.rows;
  with_rows(p, [&](const auto& rows) {
#pragma omp parallel for schedule(static) if (parallel_rows(p))
    for (int64_t i = 0; i < n; ++i) {
      double s = 0;
      rows.for_each(i, [&](int64_t j, double v) { s += v * ep[j]; });        // (P e)_i
      xp[i] += s;
    }
  });
}

/// rc = P^T (b - A x) without the residual stored: each thread forms the residual of its
/// rows and scatters it into its own [coarse] buffer, as CsrData::apply_transposed does.
void restrict_residual(const CsrData& a, const CsrData& p, const at::Tensor& b, const at::Tensor& x, at::Tensor& rc,
                       at::Tensor& partial) {
  const int64_t rows = p.rows, cols = p.cols;
  const int threads = rows * 4 < 65536 ? 1 : std::max(1, at::get_num_threads());   // as apply_transposed
  if (!partial.defined() || partial.size(0) != threads || partial.size(1) != cols) {
    partial = at::empty({threads, cols}, at::kDouble);
  }
  partial.zero_();
  const double* bp = b.data_ptr<double>();
  const double* xp = x.data_ptr<double>();
  const double* pv = p.values.data_ptr<double>();
  double* buf = partial.data_ptr<double>();
  with_index_type(p.row_ptr.scalar_type(), [&]<typename I>() {
    const I* prp = p.row_ptr.data_ptr<I>();
    const I* pci = p.col_idx.data_ptr<I>();
    with_rows(a, [&](const auto& arows) {
#pragma omp parallel num_threads(threads)
      {
        const int t = omp_get_thread_num(), team = omp_get_num_threads();
        double* out = buf + static_cast<int64_t>(t) * cols;
        for (int64_t i = rows * t / team; i < rows * (t + 1) / team; ++i) {
          double s = 0;
          arows.for_each(i, [&](int64_t j, double v) { s += v * xp[j]; });   // (A x)_i
          const double res = bp[i] - s;                                      // (b - A x)_i
          for (I q = prp[i]; q < prp[i + 1]; ++q) out[pci[q]] += pv[q] * res;   // rc_j += p_ij res_i
        }
      }
    });
  });
  if (threads == 1) {
    rc.copy_(partial[0]);
  } else {
    at::sum_out(rc, partial, at::IntArrayRef{0});
  }
}

}  // namespace

AmgHierarchy::AmgHierarchy(std::vector<AmgLevel> levels, at::Tensor coarse_inverse, AmgOptions options)
    : levels_(std::move(levels)), coarse_inverse_(std::move(coarse_inverse)), options_(options) {}

at::Tensor AmgHierarchy::vcycle(const at::Tensor& r) const {
  at::Tensor z = at::empty({r.numel()}, r.options());
  vcycle(r, z);
  return z;
}

void AmgHierarchy::vcycle(const at::Tensor& r, at::Tensor& z, at::Tensor* scratch) const {
  TESSERA_CHECK(!levels_.empty() && r.dim() == 1 && r.size(0) == levels_[0].a.rows && z.sizes() == r.sizes() &&
                    z.is_contiguous() && z.scalar_type() == r.scalar_type() && z.device() == r.device() && !z.is_same(r),
                DimensionMismatch, "AMG cycle: r and z must be [", levels_.empty() ? 0 : levels_[0].a.rows,
                "], z contiguous of r's dtype and device");
  TESSERA_CHECK(!scratch || (scratch->sizes() == r.sizes() && scratch->is_contiguous() &&
                             scratch->scalar_type() == r.scalar_type() && scratch->device() == r.device() &&
                             !scratch->is_same(r) && !scratch->is_same(z)),
                DimensionMismatch, "AMG cycle: the scratch vector must be like z, and neither r nor z");
  std::lock_guard<std::mutex> lock(work_->mutex);
  ensure_workspace(r);
  work_->scratch = scratch;
  try {
    cycle(0, r, z);
  } catch (...) {
    work_->scratch = nullptr;
    throw;
  }
  work_->scratch = nullptr;
}

void AmgHierarchy::ensure_workspace(const at::Tensor& r) const {
  std::vector<LevelVectors>& ws = work_->levels;
  if (!ws.empty() && ws[0].r.defined() && ws[0].r.scalar_type() == r.scalar_type() &&
      ws[0].r.device() == r.device()) {
    return;
  }
  ws.assign(levels_.size(), LevelVectors{});
  for (size_t l = 0; l < levels_.size(); ++l) {
    const int64_t n = levels_[l].a.rows;
    LevelVectors& v = ws[l];
    v.r = at::empty({n}, r.options());
    if (l > 0) v.d = at::empty({n}, r.options());   // the finest d: on first use without a scratch; t: where no row kernel applies
    if (l > 0) {
      v.b = at::empty({n}, r.options());
      v.x = at::empty({n}, r.options());
    }
  }
}

int64_t AmgHierarchy::workspace_bytes() const {
  std::lock_guard<std::mutex> lock(work_->mutex);
  auto size = [](const at::Tensor& t) { return t.defined() ? t.numel() * static_cast<int64_t>(t.element_size()) : 0; };
  int64_t total = 0;
  for (const LevelVectors& v : work_->levels) total += size(v.b) + size(v.x) + size(v.r) + size(v.d) + size(v.t) + size(v.partial);
  return total;
}

/// Chebyshev smoothing of A x = b on the operator D^{-1} A over [lambda_max / ratio, lambda_max]
/// (Saad, Iterative Methods, Alg. 12.1) from x = 0 (`zero_guess`) or from x, updated in place.
/// The polynomial is fixed, so pre- and post-smoothing together keep the V-cycle symmetric.
/// Three vectors of the level: x and the workspace's r and d (A d is formed row by row, or
/// off the CPU in the workspace's t; the finest d may be the caller's scratch).
void AmgHierarchy::smooth(size_t l, const at::Tensor& b, at::Tensor& x, bool zero_guess) const {
  const AmgLevel& level = levels_[l];
  LevelVectors& v = work_->levels[l];
  const double upper = level.lambda_max, lower = level.lambda_max / options_.smoother_ratio;
  const double theta = 0.5 * (upper + lower), delta = 0.5 * (upper - lower);
  const double sigma = theta / delta;
  double rho = 1.0 / sigma;
  at::Tensor& r = v.r;
  at::Tensor& d = l == 0 && work_->scratch ? *work_->scratch : v.d;        // the caller's dead vector, or ours
  if (!d.defined()) d = at::empty_like(r);
  at::Tensor& t = v.t;
  if (zero_guess) {
    r.copy_(b);                                                             // r = b
  } else {
    level.a.apply(x, r);
    r.neg_().add_(b);                                                       // r = b - A x
  }
  r.mul_(level.inv_diag);                                                   // r = D^{-1} (b - A x)
  d.copy_(r).div_(theta);                                                   // d = r / theta
  if (zero_guess) {
    x.copy_(d);                                                             // x = d
  } else {
    x.add_(d);                                                              // x = x + d
  }
  const bool fused = raw(level.a, {&r, &d}) && level.inv_diag.is_cpu() && level.inv_diag.scalar_type() == at::kDouble &&
                     (level.inv_diag.is_contiguous() || level.inv_diag.stride(0) == 0);
  for (int k = 1; k < options_.smoother_degree; ++k) {
    if (fused) {
      residual_step(level.a, d, level.inv_diag, r);                         // r = r - D^{-1} A d
    } else {
      if (!t.defined()) t = at::empty_like(r);
      level.a.apply(d, t);
      r.sub_(t.mul_(level.inv_diag));                                       // r = r - D^{-1} A d
    }
    const double rho_next = 1.0 / (2.0 * sigma - rho);
    d.mul_(rho_next * rho).add_(r, 2.0 * rho_next / delta);                 // d = rho' rho d + 2 rho' / delta r
    rho = rho_next;
    x.add_(d);                                                              // x = x + d
  }
}

void AmgHierarchy::cycle(size_t l, const at::Tensor& b, at::Tensor& x) const {
  const AmgLevel& level = levels_[l];
  if (l + 1 == levels_.size()) {
    if (coarse_inverse_.defined()) {
      x.copy_(at::mv(coarse_inverse_, b));                                  // x = A_c^{-1} b
    } else {                                                                // too large for a dense solve
      smooth(l, b, x, true);
      smooth(l, b, x, false);
    }
    return;
  }
  LevelVectors& v = work_->levels[l];
  LevelVectors& c = work_->levels[l + 1];
  const bool fused = raw(level.a, {&b, &x}) && raw(level.p, {&c.b, &c.x});
  smooth(l, b, x, true);                                                    // pre-smoothing
  if (fused) {
    restrict_residual(level.a, level.p, b, x, c.b, v.partial);              // r_c = P^T (b - A x)
  } else {
    if (!v.t.defined()) v.t = at::empty_like(x);
    level.a.apply(x, v.t);
    v.t.neg_().add_(b);                                                     // t = b - A x
    level.p.apply_transposed(v.t, c.b, v.partial);                          // r_c = P^T (b - A x)
  }
  coarse_solve(l + 1, c.b, c.x);                                            // e_c ~= A_c^{-1} r_c
  if (fused) {
    add_product(level.p, c.x, x);                                           // x = x + P e_c
  } else {
    level.p.apply(c.x, v.t);
    x.add_(v.t);                                                            // x = x + P e_c
  }
  smooth(l, b, x, false);                                                   // post-smoothing, x in place
}

void AmgHierarchy::coarse_solve(size_t l, const at::Tensor& r, at::Tensor& e) const {
  if (options_.cycle == AmgCycle::V || l + 1 == levels_.size()) {          // one cycle (exact at the end)
    cycle(l, r, e);
    return;
  }
  const CsrData& a = levels_[l].a;
  at::Tensor& c1 = e;
  cycle(l, r, c1);                                                          // c1 = B r
  at::Tensor v1 = a.apply(c1);                                              // v1 = A c1
  if (options_.cycle == AmgCycle::W) {                                      // e = B r + B (r - A B r)
    at::Tensor c2 = at::empty_like(c1);
    cycle(l, r - v1, c2);
    c1.add_(c2);
    return;
  }
  // K-cycle: two steps of flexible CG on A e = r from e = 0, preconditioned by B
  const double rho1 = at::dot(c1, v1).item<double>();                       // rho1 = <c1, A c1>
  const double alpha1 = at::dot(c1, r).item<double>();                      // alpha1 = <c1, r>
  if (!(rho1 > 0.0)) return;                                                // e = c1
  at::Tensor rt = r - v1 * (alpha1 / rho1);                                 // r~ = r - (alpha1 / rho1) A c1
  if (rt.norm().item<double>() <= 0.25 * r.norm().item<double>()) {         // one step did it
    c1.mul_(alpha1 / rho1);
    return;
  }
  at::Tensor c2 = at::empty_like(c1);
  cycle(l, rt, c2);                                                         // c2 = B r~
  at::Tensor v2 = a.apply(c2);                                              // v2 = A c2
  const double gamma = at::dot(c2, v1).item<double>();                      // gamma = <c2, A c1>
  const double beta = at::dot(c2, v2).item<double>();                       // beta = <c2, A c2>
  const double alpha2 = at::dot(c2, rt).item<double>();                     // alpha2 = <c2, r~>
  const double rho2 = beta - gamma * gamma / rho1;                          // <d2, A d2>, d2 = c2 - (gamma / rho1) c1
  if (!(rho2 > 0.0)) {
    c1.mul_(alpha1 / rho1);
    return;
  }
  // e = (alpha1 / rho1 - gamma alpha2 / (rho1 rho2)) c1 + (alpha2 / rho2) c2
  c1.mul_(alpha1 / rho1 - gamma * alpha2 / (rho1 * rho2)).add_(c2, alpha2 / rho2);
}

double AmgHierarchy::operator_complexity() const {
  double total = 0;
  for (const auto& level : levels_) total += static_cast<double>(level.a.nnz());
  return levels_.empty() ? 0.0 : total / static_cast<double>(levels_.front().a.nnz());
}

int64_t AmgHierarchy::bytes() const {
  // a tensor broadcast from one value (stride 0, D^{-1} of a constant diagonal) holds one element
  auto size = [](const at::Tensor& t) {
    if (!t.defined()) return int64_t{0};
    const int64_t n = t.dim() == 1 && t.stride(0) == 0 ? 1 : t.numel();
    return n * static_cast<int64_t>(t.element_size());
  };
  auto csr = [&](const CsrData& m) { return size(m.row_ptr) + size(m.col_idx) + size(m.values); };
  int64_t total = size(coarse_inverse_);
  for (size_t l = 0; l < levels_.size(); ++l) {
    if (l > 0) total += csr(levels_[l].a);
    total += csr(levels_[l].p) + size(levels_[l].inv_diag);
  }
  return total;
}

}  // namespace tessera::sla::detail
