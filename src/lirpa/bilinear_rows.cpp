// The McCormick relaxation of Z = X Y through dense rows with per-product plane mixes, in
// one pass (bilinear_rows.h), and its backward in one pass.
//
// Per row s, batch entry b and product (i, k, j), with a = A_ij, p = max(a, 0), q = min(a, 0),
// r_l, r_u the mixes clamped to [0, 1], x = X_ik in [lx, ux], y = Y_kj in [ly, uy]:
//   pl = p r_l,  pu = p (1 - r_l),  nu = q r_u,  nl = q (1 - r_u)
//   A_X_ik += (pl + nl) ly + (pu + nu) uy
//   A_Y_kj += (pl + nu) lx + (pu + nl) ux
//   bias   -= pl lx ly + pu ux uy + nu lx uy + nl ux ly
// Backward, with gX = dL/dA_X_ik, gY = dL/dA_Y_kj, g = dL/dbias:
//   g_pl = gX ly + gY lx - g lx ly        g_pu = gX uy + gY ux - g ux uy
//   g_nu = gX uy + gY lx - g lx uy        g_nl = gX ly + gY ux - g ux ly
//   dL/dA_ij  = [a >= 0] sum_k (g_pl r_l + g_pu (1 - r_l)) + [a <= 0] sum_k (g_nu r_u + g_nl (1 - r_u))
//   dL/dr_l   = p (g_pl - g_pu) [0 <= alpha_l <= 1],   dL/dr_u = q (g_nu - g_nl) [0 <= alpha_u <= 1]
//   dL/dlx_ik = sum_j (pl + nu) gY - g (pl ly + nu uy)    dL/dux_ik = sum_j (pu + nl) gY - g (pu uy + nl ly)
//   dL/dly_kj = sum_i (pl + nl) gX - g (pl lx + nl ux)    dL/duy_kj = sum_i (pu + nu) gX - g (pu ux + nu lx)
// (at a = 0 both sides pass, as autograd's clamp_min / clamp_max masks do). The bounds'
// gradients are summed per row first, then over each group's rows.

#include "bilinear_rows.h"

#include <ATen/Parallel.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include <algorithm>
#include <vector>

#include "tessera/core/cpu_clones.h"

namespace tessera::lirpa::detail {
namespace {

using torch::autograd::variable_list;

struct Dims {
  int64_t b, n, k, m;
};

template <typename T>
T unit(T v) {
  return std::min(std::max(v, T(0)), T(1));
}

// One row s: a [B, n, m], r [2, B, n, k, m], lx/ux [B, n, k], ly/uy [B, k, m] -> ax [B, n, k],
// ay [B, k, m] (written), the returned constant.
template <typename T>
[[gnu::always_inline]] inline T forward_row_body(const T* __restrict a, const T* __restrict r, const T* __restrict lx,
                                                 const T* __restrict ux, const T* __restrict ly,
                                                 const T* __restrict uy, T* __restrict ax, T* __restrict ay, Dims d) {
  const int64_t products = d.b * d.n * d.k * d.m;
  std::fill(ay, ay + d.b * d.k * d.m, T(0));
  T bias = 0;
  for (int64_t b = 0; b < d.b; ++b) {
    for (int64_t i = 0; i < d.n; ++i) {
      const T* arow = a + (b * d.n + i) * d.m;
      for (int64_t kk = 0; kk < d.k; ++kk) {
        const int64_t xi = (b * d.n + i) * d.k + kk, yi = (b * d.k + kk) * d.m, ri = xi * d.m;
        const T* rl = r + ri;
        const T* ru = r + products + ri;
        const T lxv = lx[xi], uxv = ux[xi];
        T* ayrow = ay + yi;
        T sx = 0, sb = 0;
        for (int64_t j = 0; j < d.m; ++j) {
          const T v = arow[j], p = std::max(v, T(0)), q = std::min(v, T(0));
          const T pl = p * unit(rl[j]), pu = p - pl, nu = q * unit(ru[j]), nl = q - nu;
          const T l = ly[yi + j], u = uy[yi + j];
          sx += (pl + nl) * l + (pu + nu) * u;
          ayrow[j] += (pl + nu) * lxv + (pu + nl) * uxv;
          sb += pl * lxv * l + pu * uxv * u + nu * lxv * u + nl * uxv * l;
        }
        ax[xi] = sx;
        bias -= sb;
      }
    }
  }
  return bias;
}

TESSERA_CPU_CLONES double forward_row(const double* a, const double* r, const double* lx, const double* ux,
                                      const double* ly, const double* uy, double* ax, double* ay, Dims d) {
  return forward_row_body(a, r, lx, ux, ly, uy, ax, ay, d);
}
TESSERA_CPU_CLONES float forward_row(const float* a, const float* r, const float* lx, const float* ux,
                                     const float* ly, const float* uy, float* ax, float* ay, Dims d) {
  return forward_row_body(a, r, lx, ux, ly, uy, ax, ay, d);
}

// Pointers of one row's operands and results (nullptr: a gradient not asked for).
template <typename T>
struct BackRow {
  const T *a, *r, *lx, *ux, *ly, *uy, *gx, *gy;
  T g;
  T *da, *dr, *dlx, *dux, *dly, *duy;
  T* acc;  // 2 m scratch: sum_k of the p and q sides for one (b, i)
};

template <typename T>
[[gnu::always_inline]] inline void backward_row_body(const BackRow<T>& w, Dims d) {
  const int64_t products = d.b * d.n * d.k * d.m;
  T* gp = w.acc;
  T* gq = w.acc + d.m;
  if (w.dly) std::fill(w.dly, w.dly + d.b * d.k * d.m, T(0));
  if (w.duy) std::fill(w.duy, w.duy + d.b * d.k * d.m, T(0));
  const T g = w.g;
  for (int64_t b = 0; b < d.b; ++b) {
    for (int64_t i = 0; i < d.n; ++i) {
      const T* arow = w.a + (b * d.n + i) * d.m;
      std::fill(gp, gp + 2 * d.m, T(0));
      for (int64_t kk = 0; kk < d.k; ++kk) {
        const int64_t xi = (b * d.n + i) * d.k + kk, yi = (b * d.k + kk) * d.m, ri = xi * d.m;
        const T* rl = w.r + ri;
        const T* ru = w.r + products + ri;
        const T lxv = w.lx[xi], uxv = w.ux[xi];
        const T gxv = w.gx ? w.gx[xi] : T(0);
        T slx = 0, sux = 0;
        for (int64_t j = 0; j < d.m; ++j) {
          const T v = arow[j], p = std::max(v, T(0)), q = std::min(v, T(0));
          const T al = rl[j], au = ru[j], cl = unit(al), cu = unit(au);
          const T pl = p * cl, pu = p - pl, nu = q * cu, nl = q - nu;
          const T l = w.ly[yi + j], u = w.uy[yi + j];
          const T gyv = w.gy ? w.gy[yi + j] : T(0);
          const T g_pl = gxv * l + gyv * lxv - g * lxv * l, g_pu = gxv * u + gyv * uxv - g * uxv * u;
          const T g_nu = gxv * u + gyv * lxv - g * lxv * u, g_nl = gxv * l + gyv * uxv - g * uxv * l;
          gp[j] += g_pl * cl + g_pu * (1 - cl);
          gq[j] += g_nu * cu + g_nl * (1 - cu);
          if (w.dr) {
            w.dr[ri + j] = al >= 0 && al <= 1 ? p * (g_pl - g_pu) : T(0);
            w.dr[products + ri + j] = au >= 0 && au <= 1 ? q * (g_nu - g_nl) : T(0);
          }
          slx += (pl + nu) * gyv - g * (pl * l + nu * u);
          sux += (pu + nl) * gyv - g * (pu * u + nl * l);
          if (w.dly) w.dly[yi + j] += (pl + nl) * gxv - g * (pl * lxv + nl * uxv);
          if (w.duy) w.duy[yi + j] += (pu + nu) * gxv - g * (pu * uxv + nu * lxv);
        }
        if (w.dlx) w.dlx[xi] = slx;
        if (w.dux) w.dux[xi] = sux;
      }
      if (w.da) {
        T* darow = w.da + (b * d.n + i) * d.m;
        for (int64_t j = 0; j < d.m; ++j) darow[j] = (arow[j] >= 0 ? gp[j] : T(0)) + (arow[j] <= 0 ? gq[j] : T(0));
      }
    }
  }
}

TESSERA_CPU_CLONES void backward_row(const BackRow<double>& w, Dims d) { backward_row_body(w, d); }
TESSERA_CPU_CLONES void backward_row(const BackRow<float>& w, Dims d) { backward_row_body(w, d); }

/// Row s's offset into a `[G, per...]` tensor read by S rows in groups.
int64_t group_offset(int64_t s, int64_t rows, const at::Tensor& t, int64_t per) {
  return s / (rows / t.size(0)) * per;
}

int64_t grain(const Dims& d) {
  return std::max<int64_t>(1, 16384 / std::max<int64_t>(1, d.b * d.n * d.k * d.m));
}

Dims dims_of(const at::Tensor& alpha) {
  const int64_t r = alpha.dim();
  return {alpha.size(2), alpha.size(r - 3), alpha.size(r - 2), alpha.size(r - 1)};
}

template <typename T>
void forward_kernel(const at::Tensor& a, const at::Tensor& alpha, const std::array<at::Tensor, 4>& bnd,
                    BilinearRows& out) {
  const Dims d = dims_of(alpha);
  const int64_t rows = a.size(0), xs = d.b * d.n * d.k, ys = d.b * d.k * d.m, zs = d.b * d.n * d.m;
  const T* ad = a.data_ptr<T>();
  const T* rd = alpha.data_ptr<T>();
  T* axd = out.ax.data_ptr<T>();
  T* ayd = out.ay.data_ptr<T>();
  T* bd = out.bias.data_ptr<T>();
  at::parallel_for(0, rows, grain(d), [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t ox = group_offset(s, rows, bnd[0], xs), oy = group_offset(s, rows, bnd[2], ys);
      bd[s] = forward_row(ad + s * zs, rd + s * 2 * xs * d.m, bnd[0].data_ptr<T>() + ox, bnd[1].data_ptr<T>() + ox,
                          bnd[2].data_ptr<T>() + oy, bnd[3].data_ptr<T>() + oy, axd + s * xs, ayd + s * ys, d);
    }
  });
}

class BilinearRowsBackward final : public torch::autograd::Node {
 public:
  std::string name() const override { return "tessera::BilinearRowsBackward"; }

  variable_list apply(variable_list&& grads) override {
    const auto dtype = a_.scalar_type();
    at::Tensor gx = grads[0].defined() ? grads[0].to(dtype).contiguous() : at::Tensor();
    at::Tensor gy = grads[1].defined() ? grads[1].to(dtype).contiguous() : at::Tensor();
    at::Tensor gb = grads[2].defined() ? grads[2].to(dtype).contiguous() : at::zeros({a_.size(0)}, a_.options());
    variable_list out(6);
    const int64_t rows = a_.size(0);
    at::Tensor da = should_compute_output(0) ? at::empty_like(a_) : at::Tensor();
    at::Tensor dr = should_compute_output(1) ? at::empty_like(alpha_) : at::Tensor();
    std::array<at::Tensor, 4> per_row;  // dlx, dux [S, B, n, k]; dly, duy [S, B, k, m], per row
    for (int q = 0; q < 4; ++q) {
      if (!should_compute_output(q + 2)) continue;
      auto shape = bnd_[q].sizes().vec();
      shape[0] = rows;
      per_row[q] = at::empty(shape, a_.options());
    }
    if (dtype == at::kDouble) kernel<double>(gx, gy, gb, da, dr, per_row);
    else kernel<float>(gx, gy, gb, da, dr, per_row);
    out[0] = da;
    out[1] = dr;
    for (int q = 0; q < 4; ++q) {
      if (!per_row[q].defined()) continue;
      const int64_t groups = bnd_[q].size(0);
      auto split = bnd_[q].sizes().vec();
      split.insert(split.begin() + 1, rows / groups);
      split[0] = groups;
      out[q + 2] = per_row[q].view(split).sum(1);  // each group's rows, summed in row order
    }
    return out;
  }

  template <typename T>
  void kernel(const at::Tensor& gx, const at::Tensor& gy, const at::Tensor& gb, at::Tensor& da, at::Tensor& dr,
              std::array<at::Tensor, 4>& per_row) {
    const Dims d = dims_of(alpha_);
    const int64_t rows = a_.size(0), xs = d.b * d.n * d.k, ys = d.b * d.k * d.m, zs = d.b * d.n * d.m;
    auto ptr = [](const at::Tensor& t) { return t.defined() ? t.data_ptr<T>() : nullptr; };
    at::parallel_for(0, rows, grain(d), [&](int64_t s0, int64_t s1) {
      std::vector<T> acc(2 * d.m);
      for (int64_t s = s0; s < s1; ++s) {
        const int64_t ox = group_offset(s, rows, bnd_[0], xs), oy = group_offset(s, rows, bnd_[2], ys);
        BackRow<T> w{};
        w.a = a_.data_ptr<T>() + s * zs;
        w.r = alpha_.data_ptr<T>() + s * 2 * xs * d.m;
        w.lx = bnd_[0].data_ptr<T>() + ox;
        w.ux = bnd_[1].data_ptr<T>() + ox;
        w.ly = bnd_[2].data_ptr<T>() + oy;
        w.uy = bnd_[3].data_ptr<T>() + oy;
        w.gx = gx.defined() ? gx.data_ptr<T>() + s * xs : nullptr;
        w.gy = gy.defined() ? gy.data_ptr<T>() + s * ys : nullptr;
        w.g = gb.data_ptr<T>()[s];
        w.da = da.defined() ? da.data_ptr<T>() + s * zs : nullptr;
        w.dr = dr.defined() ? dr.data_ptr<T>() + s * 2 * xs * d.m : nullptr;
        w.dlx = per_row[0].defined() ? ptr(per_row[0]) + s * xs : nullptr;
        w.dux = per_row[1].defined() ? ptr(per_row[1]) + s * xs : nullptr;
        w.dly = per_row[2].defined() ? ptr(per_row[2]) + s * ys : nullptr;
        w.duy = per_row[3].defined() ? ptr(per_row[3]) + s * ys : nullptr;
        w.acc = acc.data();
        backward_row(w, d);
      }
    });
  }

  at::Tensor a_, alpha_;           // detached, contiguous
  std::array<at::Tensor, 4> bnd_;  // lx, ux, ly, uy: detached, contiguous
};

bool usable(const at::Tensor& t, at::ScalarType dtype) {
  return t.defined() && t.device().is_cpu() && t.scalar_type() == dtype;
}

}  // namespace

std::optional<BilinearRows> bilinear_matmul_rows(const at::Tensor& a, const at::Tensor& alpha, const Interval& x,
                                                 const Interval& y) {
  const auto dtype = a.scalar_type();
  if (dtype != at::kDouble && dtype != at::kFloat) return std::nullopt;
  const std::array<const at::Tensor*, 6> all{&a, &alpha, &x.lower, &x.upper, &y.lower, &y.upper};
  for (const at::Tensor* t : all)
    if (!usable(*t, dtype)) return std::nullopt;
  if (a.dim() != 4 || alpha.dim() != 6 || x.lower.dim() != 4 || y.lower.dim() != 4) return std::nullopt;
  const int64_t rows = a.size(0), b = a.size(1), n = a.size(2), m = a.size(3), k = alpha.size(4);
  if (alpha.sizes() != at::IntArrayRef{rows, 2, b, n, k, m}) return std::nullopt;
  const std::vector<int64_t> xshape{b, n, k}, yshape{b, k, m};
  for (const Interval* v : {&x, &y}) {
    const auto& want = v == &x ? xshape : yshape;
    for (const at::Tensor* t : {&v->lower, &v->upper}) {
      if (t->sizes().slice(1).vec() != want || t->size(0) < 1 || rows % t->size(0) != 0) return std::nullopt;
    }
    if (v->lower.size(0) != v->upper.size(0)) return std::nullopt;
  }
  at::Tensor ac = a.detach().contiguous(), rc = alpha.detach().contiguous();
  std::array<at::Tensor, 4> bnd{x.lower.detach().contiguous(), x.upper.detach().contiguous(),
                                y.lower.detach().contiguous(), y.upper.detach().contiguous()};
  BilinearRows out{at::empty({rows, b, n, k}, ac.options()), at::empty({rows, b, k, m}, ac.options()),
                   at::empty({rows}, ac.options())};
  if (dtype == at::kDouble) forward_kernel<double>(ac, rc, bnd, out);
  else forward_kernel<float>(ac, rc, bnd, out);
  const bool tape = a.requires_grad() || alpha.requires_grad() || x.lower.requires_grad() ||
                    x.upper.requires_grad() || y.lower.requires_grad() || y.upper.requires_grad();
  if (tape) {
    std::shared_ptr<BilinearRowsBackward> node(new BilinearRowsBackward(), torch::autograd::deleteNode);
    node->a_ = ac;
    node->alpha_ = rc;
    node->bnd_ = bnd;
    node->set_next_edges(torch::autograd::collect_next_edges(a, alpha, x.lower, x.upper, y.lower, y.upper));
    torch::autograd::set_history(out.ax, node);
    torch::autograd::set_history(out.ay, node);
    torch::autograd::set_history(out.bias, node);
  }
  return out;
}

}  // namespace tessera::lirpa::detail
