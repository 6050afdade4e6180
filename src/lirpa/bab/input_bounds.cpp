// Forward linear bounds in the normalised input, intersected with IBP, and one backward
// CROWN pass of the specification rows; see input_bounds.h.

#include "lirpa/bab/input_bounds.h"

#include "lirpa/verify/batch_crown.h"

#include <ATen/ATen.h>

#include <limits>

namespace tessera::lirpa::detail {
namespace {

/// Linear relaxation of relu(z) on [l, u]: sl z <= relu(z) <= su z + ub (all [B, n]).
struct Relax {
  at::Tensor sl, su, ub;
};

Relax relax_relu(const at::Tensor& l, const at::Tensor& u) {
  at::Tensor active = l >= 0;
  at::Tensor unstable = (l < 0).logical_and(u > 0);
  at::Tensor denom = at::where(unstable, u - l, at::ones_like(u));
  at::Tensor su = at::where(unstable, u / denom, active.to(at::kDouble));  // su = u / (u - l)
  at::Tensor ub = at::where(unstable, -su * l, at::zeros_like(u));        // relu(z) <= su (z - l)
  at::Tensor sl = active.logical_or(unstable.logical_and(u > -l)).to(at::kDouble);  // adaptive slope
  return {sl, su, ub};
}

/// The stacked weight [[W+^T, W-^T], [W-^T, W+^T]] ([2n, 2n']): [L U] times it gives the
/// lower and upper forms of W h from the lower and upper forms of h.
at::Tensor stacked(const at::Tensor& w) {
  at::Tensor p = w.clamp_min(0).t(), m = w.clamp_max(0).t();
  return at::cat({at::cat({p, m}, 1), at::cat({m, p}, 1)}, 0).contiguous();
}

/// Lower / upper affine forms [B, n+1, m] of a layer (rows: coefficients of e, constant).
struct Forms {
  at::Tensor lo, up;
};

/// Concrete bounds of forms over e in [-1, 1]^n: const -/+ sum_i |coef_i|.
std::pair<at::Tensor, at::Tensor> concretise(const Forms& f, int64_t n) {
  at::Tensor l = f.lo.select(1, n) - f.lo.narrow(1, 0, n).abs().sum(1);
  at::Tensor u = f.up.select(1, n) + f.up.narrow(1, 0, n).abs().sum(1);
  return {l, u};
}

/// Forms of W h + b from the forms of z (the pre-activation of h = relu(z)) and its relaxation.
Forms next_forms(const Forms& z, const Relax& r, const at::Tensor& w_stacked, const at::Tensor& bias, int64_t n) {
  at::Tensor hl = z.lo * r.sl.unsqueeze(1);  // relu(z) >= sl z >= sl L(e)     (sl >= 0)
  at::Tensor hu = z.up * r.su.unsqueeze(1);  // relu(z) <= su U(e) + ub         (su >= 0)
  hu.select(1, n).add_(r.ub);
  int64_t bsz = hl.size(0), m = hl.size(2);
  at::Tensor both = at::cat({hl, hu}, 2).reshape({bsz * (n + 1), 2 * m});
  at::Tensor out = at::mm(both, w_stacked).reshape({bsz, n + 1, -1});  // [L' U'] = [L U] Wst
  int64_t m2 = out.size(2) / 2;
  Forms f{out.narrow(2, 0, m2), out.narrow(2, m2, m2)};
  f.lo.select(1, n).add_(bias);
  f.up.select(1, n).add_(bias);
  return f;
}

/// IBP of W relu(z) + b from z in [l, u]: [relu(l) relu(u)] Wst.
std::pair<at::Tensor, at::Tensor> ibp(const at::Tensor& l, const at::Tensor& u, const at::Tensor& w_stacked,
                                      const at::Tensor& bias) {
  at::Tensor out = at::mm(at::cat({l.clamp_min(0), u.clamp_min(0)}, 1), w_stacked);
  int64_t m = out.size(1) / 2;
  return {out.narrow(1, 0, m) + bias, out.narrow(1, m, m) + bias};
}

}  // namespace

BoxBounds bound_input_boxes(const ReluNet& net, const at::Tensor& xl, const at::Tensor& xu, const at::Tensor& c,
                            const at::Tensor& rhs) {
  at::NoGradGuard no_grad;
  const int64_t n = xl.size(1);
  at::Tensor centre = (xl + xu) / 2, radius = (xu - xl) / 2;
  // layer 1 exactly: z = W (centre + radius e) + b
  Forms z;
  at::Tensor coef = radius.unsqueeze(2) * net.w[0].t().unsqueeze(0);               // [B, n, n_1]
  at::Tensor cst = at::addmm(net.b[0], centre, net.w[0].t()).unsqueeze(1);         // [B, 1, n_1]
  z.lo = at::cat({coef, cst}, 1);
  z.up = z.lo;
  auto [l, u] = concretise(z, n);
  LayerBounds fwd;
  for (int layer = 1; layer < net.layers(); ++layer) {
    fwd.lower.push_back(l), fwd.upper.push_back(u);
    if (layer + 1 == net.layers()) break;  // the output layer needs no forms
    Relax relax = relax_relu(l, u);
    at::Tensor ws = stacked(net.w[layer]);
    z = next_forms(z, relax, ws, net.b[layer], n);
    auto [fl, fu] = concretise(z, n);
    auto [il, iu] = ibp(l, u, ws, net.b[layer]);
    l = at::max(fl, il);  // both sound: intersect
    u = at::max(at::min(fu, iu), l);
  }
  // backward CROWN of every hidden layer, each intersected with the forward bounds above
  DomainBatch d{xl, xu, {}};
  LayerBounds crown = intermediate_bounds(net, d, &fwd);
  FinalBound fb = final_bound(net, d, crown, c, rhs);
  return {fb.lb, fb.a_input};
}

}  // namespace tessera::lirpa::detail
