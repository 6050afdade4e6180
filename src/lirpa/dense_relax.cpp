// One pass over dense rows or patch rows for an elementwise relaxation (see dense_relax.h).

#include "dense_relax.h"

#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tessera/core/cpu_clones.h"

namespace tessera::lirpa::detail {
namespace {

// Whether every entry of a contiguous float or double tensor is finite: one pass over the
// data (no tensors made: called for every relaxation tensor of every pass).
template <typename T>
bool all_finite(const T* p, int64_t n) {
  bool finite = true;
  for (int64_t i = 0; i < n; ++i) finite &= std::isfinite(p[i]);  // no early exit: it vectorises
  return finite;
}
bool all_finite(const at::Tensor& t) {
  if (t.scalar_type() == at::kDouble) return all_finite(t.data_ptr<double>(), t.numel());
  if (t.scalar_type() == at::kFloat) return all_finite(t.data_ptr<float>(), t.numel());
  return at::isfinite(t).all().item<bool>();
}

// t (node-shaped, or [G, *node] in row groups) as [G, N] contiguous rows with G | S, or
// nothing (undefined t: an empty tensor).
std::optional<at::Tensor> group_rows(const at::Tensor& t, int64_t s, at::IntArrayRef node, at::ScalarType dtype) {
  if (!t.defined()) return at::Tensor();
  if (!t.device().is_cpu()) return std::nullopt;
  const int64_t dims = static_cast<int64_t>(node.size());
  at::Tensor g = t.dim() == dims ? t.unsqueeze(0) : t;
  if (g.dim() != dims + 1 || g.size(0) < 1 || s % g.size(0) != 0) return std::nullopt;
  for (int64_t i = 0; i < dims; ++i)
    if (g.size(i + 1) != node[i] && g.size(i + 1) != 1) return std::nullopt;
  std::vector<int64_t> shape{g.size(0)};
  shape.insert(shape.end(), node.begin(), node.end());
  g = g.to(dtype).expand(shape).contiguous().reshape({shape[0], -1});
  if (!all_finite(g)) return std::nullopt;
  return g;
}

// True when a gradient would be recorded through the rows `a` or the relaxation `r`.
bool on_tape(const at::Tensor& a, const ElementwiseRelaxation& r) {
  if (!at::GradMode::is_enabled()) return false;
  for (const at::Tensor* t : {&a, &r.lower_d, &r.lower_b, &r.upper_d, &r.upper_b})
    if (t->defined() && t->requires_grad()) return true;
  return false;
}

// The relaxation's four tensors as [G, N] rows (missing constants: a row of zeros), or
// nothing when a tensor falls outside group_rows' rule.
struct GroupedRelaxation {
  at::Tensor dl, bl, du, bu;
};
std::optional<GroupedRelaxation> grouped(const ElementwiseRelaxation& r, const at::Tensor& a, int64_t s,
                                         at::IntArrayRef node) {
  if (!r.lower_d.defined() || !r.upper_d.defined()) return std::nullopt;
  const at::ScalarType dtype = a.scalar_type();
  auto dl = group_rows(r.lower_d, s, node, dtype), du = group_rows(r.upper_d, s, node, dtype);
  auto bl = group_rows(r.lower_b, s, node, dtype), bu = group_rows(r.upper_b, s, node, dtype);
  if (!dl || !du || !bl || !bu) return std::nullopt;
  int64_t n = 1;
  for (int64_t d : node) n *= d;
  const at::Tensor none = at::zeros({1, n}, a.options());  // no constant: 0
  return GroupedRelaxation{*dl, bl->defined() ? *bl : none, *du, bu->defined() ? *bu : none};
}

bool cpu_floating(const at::Tensor& a) {
  return a.size(0) > 0 && a.device().is_cpu() && (a.scalar_type() == at::kDouble || a.scalar_type() == at::kFloat);
}

template <typename T>
struct Rows {
  const T* data = nullptr;
  int64_t per_group = 1;  // rows of A that read one row of it
  Rows(const at::Tensor& t, int64_t s) : data(t.data_ptr<T>()), per_group(s / t.size(0)) {}
  const T* row(int64_t i, int64_t n) const { return data + (i / per_group) * n; }
};

// One row: x = A+ d_l + A- d_u, returning sum(A+ b_l) + sum(A- b_u). Branch-free, with the
// sums kept in kLanes partial sums (entry j in lane j mod kLanes, then the lanes in order), so
// the compiler vectorises it without reassociating and every instruction set adds in the same
// order; compiled for AVX-512, AVX2 and the baseline on x86-64 and the loader picks the one the
// processor runs. One of A+ and A- is 0 in every entry, so a fused multiply-add gives the same
// x as a product and a sum.
constexpr int64_t kLanes = 8;
template <typename T>
[[gnu::always_inline]] inline T relax_row_body(const T* __restrict a, const T* __restrict l, const T* __restrict u,
                                              const T* __restrict lb, const T* __restrict ub, T* __restrict x,
                                              int64_t n) {
  T from_lower[kLanes] = {}, from_upper[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int64_t k = 0; k < kLanes; ++k) {
      const T pos = std::max(a[j + k], T(0)), neg = std::min(a[j + k], T(0));
      x[j + k] = pos * l[j + k] + neg * u[j + k];  // A+ d_l + A- d_u
      from_lower[k] += pos * lb[j + k];            // A+ b_l
      from_upper[k] += neg * ub[j + k];            // A- b_u
    }
  }
  for (int64_t k = 0; j < n; ++j, ++k) {
    const T pos = std::max(a[j], T(0)), neg = std::min(a[j], T(0));
    x[j] = pos * l[j] + neg * u[j];
    from_lower[k] += pos * lb[j];
    from_upper[k] += neg * ub[j];
  }
  T sum = 0;
  for (int64_t k = 0; k < kLanes; ++k) sum += from_lower[k] + from_upper[k];
  return sum;
}

TESSERA_CPU_CLONES double relax_row(const double* a, const double* l, const double* u, const double* lb,
                                      const double* ub, double* x, int64_t n) {
  return relax_row_body(a, l, u, lb, ub, x, n);
}
TESSERA_CPU_CLONES float relax_row(const float* a, const float* l, const float* u, const float* lb, const float* ub,
                                     float* x, int64_t n) {
  return relax_row_body(a, l, u, lb, ub, x, n);
}

template <typename T>
void relax_kernel(const at::Tensor& a, const at::Tensor& dl, const at::Tensor& bl, const at::Tensor& du,
                  const at::Tensor& bu, at::Tensor& ax, at::Tensor& bias) {
  const int64_t s = a.size(0), n = a.numel() / std::max<int64_t>(s, 1);
  const T* ad = a.data_ptr<T>();
  T* xd = ax.data_ptr<T>();
  T* bd = bias.data_ptr<T>();
  Rows<T> l(dl, s), u(du, s), lb(bl, s), ub(bu, s);
  at::parallel_for(0, s, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)), [&](int64_t begin, int64_t end) {
    RowWalk<const T> lw(l.data, l.per_group, begin, n), uw(u.data, u.per_group, begin, n),
        lbw(lb.data, lb.per_group, begin, n), ubw(ub.data, ub.per_group, begin, n);
    for (int64_t i = begin; i < end; ++i)
      bd[i] = relax_row(ad + i * n, lw.next(), uw.next(), lbw.next(), ubw.next(), xd + i * n, n);
  });
}

// Patch rows: row s is kernel K[s] ([C, KH, KW]) with its corner at (y_s, x_s) of a
// [C, H, W] node; the relaxation is read at the node position under each kernel entry, and
// entries outside the node become 0.
template <typename T>
void relax_patch_kernel(const at::Tensor& k, const at::Tensor& origin, const std::vector<int64_t>& node,
                        const at::Tensor& dl, const at::Tensor& bl, const at::Tensor& du, const at::Tensor& bu,
                        at::Tensor& kx, at::Tensor& bias) {
  const int64_t s = k.size(0), c = k.size(1), kh = k.size(2), kw = k.size(3);
  const int64_t h = node[node.size() - 2], w = node[node.size() - 1], n = c * h * w;
  const T* kd = k.data_ptr<T>();
  const int64_t* od = origin.data_ptr<int64_t>();
  T* xd = kx.data_ptr<T>();
  T* bd = bias.data_ptr<T>();
  Rows<T> l(dl, s), u(du, s), lb(bl, s), ub(bu, s);
  const int64_t per_row = c * kh * kw;
  at::parallel_for(0, s, std::max<int64_t>(1, 16384 / std::max<int64_t>(per_row, 1)), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t y0 = od[2 * i], x0 = od[2 * i + 1];
      const int64_t j0 = std::clamp<int64_t>(-x0, 0, kw), j1 = std::clamp<int64_t>(w - x0, j0, kw);  // columns inside
      const T *li = l.row(i, n), *ui = u.row(i, n), *lbi = lb.row(i, n), *ubi = ub.row(i, n);
      T from_lower = 0, from_upper = 0;
      for (int64_t ch = 0; ch < c; ++ch) {
        for (int64_t a = 0; a < kh; ++a) {
          const T* kr = kd + ((i * c + ch) * kh + a) * kw;
          T* xr = xd + ((i * c + ch) * kh + a) * kw;
          const int64_t y = y0 + a;
          if (y < 0 || y >= h) {
            std::fill(xr, xr + kw, T(0));
            continue;
          }
          std::fill(xr, xr + j0, T(0));
          std::fill(xr + j1, xr + kw, T(0));
          const int64_t at_node = (ch * h + y) * w + x0;  // node index of kernel column 0
#pragma omp simd reduction(+ : from_lower, from_upper)
          for (int64_t j = j0; j < j1; ++j) {
            const T pos = std::max(kr[j], T(0)), neg = std::min(kr[j], T(0));
            xr[j] = pos * li[at_node + j] + neg * ui[at_node + j];  // K+ d_l + K- d_u
            from_lower += pos * lbi[at_node + j];                 // K+ b_l
            from_upper += neg * ubi[at_node + j];                 // K- b_u
          }
        }
      }
      bd[i] = from_lower + from_upper;
    }
  });
}

}  // namespace

std::optional<RelaxedRows> relax_dense_rows(const at::Tensor& a, const ElementwiseRelaxation& r) {
  if (a.dim() < 2 || !cpu_floating(a)) return std::nullopt;  // a CPU kernel: other devices take the ATen path
  const bool tape = on_tape(a, r);
  std::optional<GroupedRelaxation> g;
  at::Tensor ax, bias;
  {
    at::NoGradGuard untaped;  // on a tape, the pass is recorded as one node below
    g = grouped(r, a, a.size(0), a.sizes().slice(1));
    if (!g) return std::nullopt;
    at::Tensor ac = a.contiguous();
    ax = at::empty_like(ac), bias = at::empty({ac.size(0)}, ac.options());
    if (ac.scalar_type() == at::kDouble) relax_kernel<double>(ac, g->dl, g->bl, g->du, g->bu, ax, bias);
    else relax_kernel<float>(ac, g->dl, g->bl, g->du, g->bu, ax, bias);
  }
  if (tape) record_relax(a, r, {g->dl, g->bl, g->du, g->bu}, ax, bias);
  return RelaxedRows{DenseA::make(ax), bias};
}

std::optional<at::Tensor> relax_patch_rows(const at::Tensor& kernel, const at::Tensor& origin,
                                           const std::vector<int64_t>& node, const ElementwiseRelaxation& r,
                                           at::Tensor& bias) {
  if (kernel.dim() != 4 || !cpu_floating(kernel) || on_tape(kernel, r)) return std::nullopt;
  auto g = grouped(r, kernel, kernel.size(0), node);
  if (!g) return std::nullopt;
  at::Tensor k = kernel.contiguous(), o = origin.to(at::kLong).contiguous();
  at::Tensor kx = at::empty_like(k);
  bias = at::empty({k.size(0)}, k.options());
  if (k.scalar_type() == at::kDouble) relax_patch_kernel<double>(k, o, node, g->dl, g->bl, g->du, g->bu, kx, bias);
  else relax_patch_kernel<float>(k, o, node, g->dl, g->bl, g->du, g->bu, kx, bias);
  return kx;
}

}  // namespace tessera::lirpa::detail
