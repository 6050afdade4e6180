// One pass over dense rows for an elementwise relaxation (see dense_relax.h).

#include "dense_relax.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <vector>

namespace tessera::lirpa::detail {
namespace {

// t as [G, N] contiguous rows with G | S, or nothing (undefined t: an empty tensor).
std::optional<at::Tensor> group_rows(const at::Tensor& t, const at::Tensor& a) {
  if (!t.defined()) return at::Tensor();
  if (!t.device().is_cpu()) return std::nullopt;
  const int64_t s = a.size(0), n = a.numel() / std::max<int64_t>(s, 1);
  at::Tensor g = t.dim() == a.dim() - 1 ? t.unsqueeze(0) : t;
  if (g.dim() != a.dim() || g.size(0) < 1 || s % g.size(0) != 0) return std::nullopt;
  for (int64_t i = 1; i < a.dim(); ++i)
    if (g.size(i) != a.size(i) && g.size(i) != 1) return std::nullopt;
  std::vector<int64_t> shape = a.sizes().vec();
  shape[0] = g.size(0);
  g = g.to(a.scalar_type()).expand(shape).contiguous().reshape({shape[0], n});
  if (!at::isfinite(g).all().item<bool>()) return std::nullopt;
  return g;
}

template <typename T>
struct Rows {
  const T* data = nullptr;
  int64_t per_group = 1;  // rows of A that read one row of it
  Rows(const at::Tensor& t, int64_t s) : data(t.data_ptr<T>()), per_group(s / t.size(0)) {}
  const T* row(int64_t i, int64_t n) const { return data + (i / per_group) * n; }
};

template <typename T>
void relax_kernel(const at::Tensor& a, const at::Tensor& dl, const at::Tensor& bl, const at::Tensor& du,
                  const at::Tensor& bu, at::Tensor& ax, at::Tensor& bias) {
  const int64_t s = a.size(0), n = a.numel() / std::max<int64_t>(s, 1);
  const T* ad = a.data_ptr<T>();
  T* xd = ax.data_ptr<T>();
  T* bd = bias.data_ptr<T>();
  Rows<T> l(dl, s), u(du, s), lb(bl, s), ub(bu, s);
  at::parallel_for(0, s, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const T* ar = ad + i * n;
      T* xr = xd + i * n;
      const T *li = l.row(i, n), *ui = u.row(i, n), *lbi = lb.row(i, n), *ubi = ub.row(i, n);
      T from_lower = 0, from_upper = 0;
#pragma omp simd reduction(+ : from_lower, from_upper)
      for (int64_t j = 0; j < n; ++j) {  // branch-free: every load unconditional, so it vectorises
        const T pos = std::max(ar[j], T(0)), neg = std::min(ar[j], T(0));
        xr[j] = pos * li[j] + neg * ui[j];  // A+ d_l + A- d_u
        from_lower += pos * lbi[j];         // A+ b_l
        from_upper += neg * ubi[j];         // A- b_u
      }
      bd[i] = from_lower + from_upper;
    }
  });
}

}  // namespace

std::optional<RelaxedRows> relax_dense_rows(const at::Tensor& a, const ElementwiseRelaxation& r) {
  if (a.dim() < 2 || a.size(0) == 0 || !a.device().is_cpu() ||
      (a.scalar_type() != at::kDouble && a.scalar_type() != at::kFloat))
    return std::nullopt;  // a CPU kernel: other devices take the ATen path
  if (at::GradMode::is_enabled()) {
    for (const at::Tensor* t : {&a, &r.lower_d, &r.lower_b, &r.upper_d, &r.upper_b})
      if (t->defined() && t->requires_grad()) return std::nullopt;
  }
  if (!r.lower_d.defined() || !r.upper_d.defined()) return std::nullopt;
  auto dl = group_rows(r.lower_d, a), du = group_rows(r.upper_d, a);
  auto bl = group_rows(r.lower_b, a), bu = group_rows(r.upper_b, a);
  if (!dl || !du || !bl || !bu) return std::nullopt;
  at::Tensor ac = a.contiguous();
  const at::Tensor none = at::zeros({1, ac.numel() / ac.size(0)}, ac.options());  // no constant: 0
  if (!bl->defined()) *bl = none;
  if (!bu->defined()) *bu = none;
  at::Tensor ax = at::empty_like(ac), bias = at::empty({ac.size(0)}, ac.options());
  if (ac.scalar_type() == at::kDouble) relax_kernel<double>(ac, *dl, *bl, *du, *bu, ax, bias);
  else relax_kernel<float>(ac, *dl, *bl, *du, *bu, ax, bias);
  return RelaxedRows{DenseA::make(ax), bias};
}

}  // namespace tessera::lirpa::detail
