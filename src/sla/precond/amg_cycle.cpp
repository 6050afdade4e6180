// The V-cycle of the smoothed-aggregation hierarchy, in ATen ops (any device).

#include <ATen/ATen.h>

#include "sla/precond/amg.h"

namespace tessera::sla::detail {

AmgHierarchy::AmgHierarchy(std::vector<AmgLevel> levels, at::Tensor coarse_inverse, AmgOptions options)
    : levels_(std::move(levels)), coarse_inverse_(std::move(coarse_inverse)), options_(options) {}

at::Tensor AmgHierarchy::vcycle(const at::Tensor& r) const { return cycle(0, r); }

/// Chebyshev smoothing of A x = b on the operator D^{-1} A over [lambda_max / ratio, lambda_max]
/// (Saad, Iterative Methods, Alg. 12.1); `x` undefined means a zero initial guess, else it is
/// updated in place. The polynomial is fixed, so pre- and post-smoothing together keep the
/// V-cycle symmetric. At most four vectors of the level live at once (r, d, x, A d).
at::Tensor AmgHierarchy::smooth(const AmgLevel& level, const at::Tensor& b, const at::Tensor& x0) const {
  const double upper = level.lambda_max, lower = level.lambda_max / options_.smoother_ratio;
  const double theta = 0.5 * (upper + lower), delta = 0.5 * (upper - lower);
  const double sigma = theta / delta;
  double rho = 1.0 / sigma;
  at::Tensor r = x0.defined() ? level.a.apply(x0).neg_().add_(b) : b.clone();   // r = b - A x
  r.mul_(level.inv_diag);                                                   // r = D^{-1} (b - A x)
  at::Tensor d = r / theta;                                                 // d = r / theta
  at::Tensor x = x0.defined() ? x0.add_(d) : d.clone();                     // x = x + d
  for (int k = 1; k < options_.smoother_degree; ++k) {
    r.sub_(level.a.apply(d).mul_(level.inv_diag));                          // r = r - D^{-1} A d
    const double rho_next = 1.0 / (2.0 * sigma - rho);
    d.mul_(rho_next * rho).add_(r, 2.0 * rho_next / delta);                 // d = rho' rho d + 2 rho' / delta r
    rho = rho_next;
    x.add_(d);                                                              // x = x + d
  }
  return x;
}

at::Tensor AmgHierarchy::cycle(size_t l, const at::Tensor& b) const {
  const AmgLevel& level = levels_[l];
  if (l + 1 == levels_.size()) {
    if (coarse_inverse_.defined()) return at::mv(coarse_inverse_, b);      // x = A_c^{-1} b
    return smooth(level, b, smooth(level, b, {}));                          // too large for a dense solve
  }
  at::Tensor x = smooth(level, b, {});                                      // pre-smoothing
  at::Tensor rc = level.p.apply_transposed(level.a.apply(x).neg_().add_(b)); // r_c = P^T (b - A x)
  at::Tensor ec = coarse_solve(l + 1, rc);                                  // e_c ~= A_c^{-1} r_c
  rc = at::Tensor();
  x.add_(level.p.apply(ec));                                                // x = x + P e_c
  ec = at::Tensor();
  return smooth(level, b, x);                                               // post-smoothing, x in place
}

at::Tensor AmgHierarchy::coarse_solve(size_t l, const at::Tensor& r) const {
  if (options_.cycle == AmgCycle::V || l + 1 == levels_.size()) return cycle(l, r);   // one cycle (exact at the end)
  const CsrData& a = levels_[l].a;
  at::Tensor c1 = cycle(l, r);                                              // c1 = B r
  at::Tensor v1 = a.apply(c1);                                              // v1 = A c1
  if (options_.cycle == AmgCycle::W) return c1.add_(cycle(l, r - v1));      // e = B r + B (r - A B r)
  // K-cycle: two steps of flexible CG on A e = r from e = 0, preconditioned by B
  const double rho1 = at::dot(c1, v1).item<double>();                       // rho1 = <c1, A c1>
  const double alpha1 = at::dot(c1, r).item<double>();                      // alpha1 = <c1, r>
  if (!(rho1 > 0.0)) return c1;
  at::Tensor rt = r - v1 * (alpha1 / rho1);                                 // r~ = r - (alpha1 / rho1) A c1
  if (rt.norm().item<double>() <= 0.25 * r.norm().item<double>()) return c1.mul_(alpha1 / rho1);  // one step did it
  at::Tensor c2 = cycle(l, rt);                                             // c2 = B r~
  at::Tensor v2 = a.apply(c2);                                              // v2 = A c2
  const double gamma = at::dot(c2, v1).item<double>();                      // gamma = <c2, A c1>
  const double beta = at::dot(c2, v2).item<double>();                       // beta = <c2, A c2>
  const double alpha2 = at::dot(c2, rt).item<double>();                     // alpha2 = <c2, r~>
  const double rho2 = beta - gamma * gamma / rho1;                          // <d2, A d2>, d2 = c2 - (gamma / rho1) c1
  if (!(rho2 > 0.0)) return c1.mul_(alpha1 / rho1);
  // e = (alpha1 / rho1 - gamma alpha2 / (rho1 rho2)) c1 + (alpha2 / rho2) c2
  return c1.mul_(alpha1 / rho1 - gamma * alpha2 / (rho1 * rho2)).add_(c2, alpha2 / rho2);
}

double AmgHierarchy::operator_complexity() const {
  double total = 0;
  for (const auto& level : levels_) total += static_cast<double>(level.a.nnz());
  return levels_.empty() ? 0.0 : total / static_cast<double>(levels_.front().a.nnz());
}

int64_t AmgHierarchy::bytes() const {
  auto size = [](const at::Tensor& t) { return t.defined() ? t.numel() * static_cast<int64_t>(t.element_size()) : 0; };
  auto csr = [&](const CsrData& m) { return size(m.row_ptr) + size(m.col_idx) + size(m.values); };
  int64_t total = size(coarse_inverse_);
  for (size_t l = 0; l < levels_.size(); ++l) {
    if (l > 0) total += csr(levels_[l].a);
    total += csr(levels_[l].p) + size(levels_[l].inv_diag);
  }
  return total;
}

}  // namespace tessera::sla::detail
