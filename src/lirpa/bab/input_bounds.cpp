// Forward linear bounds in the normalised input, intersected with IBP, and one backward
// CROWN pass of the specification rows; see input_bounds.h.

#include "lirpa/bab/input_bounds.h"

#include "lirpa/propagation.h"
#include "lirpa/verify/batch_crown.h"

#include <ATen/ATen.h>

#include <limits>
#include <tuple>
#include <vector>

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

/// Backward CROWN bounds of the pre-activations z_m = W_{m-1} h_{m-1} + b_{m-1} that [l, u]
/// leaves unstable (`unstable` [B, n_m]), intersected into [l, u] (returned). Per box, the
/// rows are its unstable neurons padded to the boxes' largest count with stable ones (their
/// bounds are sound too, so intersecting them is harmless). relus[j-1]: layer j's relaxation.
std::pair<at::Tensor, at::Tensor> crown_unstable(const ReluNet& net, int m, const std::vector<Relax>& relus,
                                                 const at::Tensor& centre, const at::Tensor& radius,
                                                 const at::Tensor& l, const at::Tensor& u, const at::Tensor& unstable) {
  const int64_t k = unstable.sum(1).max().item<int64_t>(), bsz = l.size(0);
  if (k == 0) return {l, u};
  at::Tensor idx = std::get<1>(unstable.to(at::kFloat).topk(k, 1));  // [B, k]: unstable first
  at::Tensor flat = idx.reshape({-1});
  at::Tensor rows = net.w[m - 1].index_select(0, flat).reshape({bsz, k, -1});
  at::Tensor bias = net.b[m - 1].index_select(0, flat).reshape({bsz, k});
  at::Tensor a = at::cat({rows, -rows}, 1);  // rows [e_j; -e_j] of z_m, over h_{m-1}
  bias = at::cat({bias, -bias}, 1);
  for (int j = m - 1; j >= 1; --j) {  // a: coefficients over h_j = relu(z_j)
    const Relax& r = relus[j - 1];
    at::Tensor neg = a < 0;
    bias = bias + at::bmm(a.clamp_max(0), r.ub.unsqueeze(2)).squeeze(2);  // negative coefficients take the upper line
    a = a * at::where(neg, r.su.unsqueeze(1), r.sl.unsqueeze(1));           // A <- A+ sl + A- su  (over z_j)
    bias = bias + at::matmul(a, net.b[j - 1]);                              // c += A b
    a = at::matmul(a, net.w[j - 1]);                                        // A <- A W  (over h_{j-1})
  }
  // min over the box of a x + bias = a centre - |a| radius + bias
  at::Tensor lb = bias + at::bmm(a, centre.unsqueeze(2)).squeeze(2) - at::bmm(a.abs(), radius.unsqueeze(2)).squeeze(2);
  at::Tensor lo = at::max(l.gather(1, idx), lb.narrow(1, 0, k));
  at::Tensor hi = at::min(u.gather(1, idx), -lb.narrow(1, k, k));  // u = -min(-z)
  at::Tensor nl = l.scatter(1, idx, lo);
  return {nl, at::max(u.scatter(1, idx, hi), nl)};
}

Relax select_rows(const Relax& r, const at::Tensor& rows) {
  return {r.sl.index_select(0, rows), r.su.index_select(0, rows), r.ub.index_select(0, rows)};
}

/// crown_unstable on groups of boxes with similar unstable counts (padding_groups, which
/// partition the boxes), so that few padding rows are computed.
void tighten_unstable(const ReluNet& net, int m, const std::vector<Relax>& relus, const at::Tensor& centre,
                      const at::Tensor& radius, at::Tensor& l, at::Tensor& u) {
  at::Tensor unstable = (l < 0).logical_and(u > 0);
  std::vector<at::Tensor> groups = padding_groups(unstable.sum(1));
  if (groups.size() == 1) {
    std::tie(l, u) = crown_unstable(net, m, relus, centre, radius, l, u, unstable);
    return;
  }
  at::Tensor nl = l.clone(), nu = u.clone();
  for (const at::Tensor& g : groups) {
    std::vector<Relax> rg;
    for (const Relax& r : relus) rg.push_back(select_rows(r, g));
    auto [gl, gu] = crown_unstable(net, m, rg, centre.index_select(0, g), radius.index_select(0, g),
                                   l.index_select(0, g), u.index_select(0, g), unstable.index_select(0, g));
    nl.index_copy_(0, g, gl), nu.index_copy_(0, g, gu);
  }
  l = nl, u = nu;
}

}  // namespace

BoxBounds bound_input_boxes(const ReluNet& net, const at::Tensor& xl, const at::Tensor& xu, const at::Tensor& c,
                            const at::Tensor& rhs, const LayerBounds* parent) {
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
  LayerBounds bounds;
  std::vector<Relax> relus;
  for (int layer = 1; layer < net.layers(); ++layer) {
    if (parent) {  // [l, u] <- [l, u] ∩ the parent's (sound on the whole parent box)
      l = at::max(l, parent->lower[layer - 1]);
      u = at::max(at::min(u, parent->upper[layer - 1]), l);
    }
    // backward CROWN of the neurons the forward bounds leave unstable (the others' bounds
    // do not enter any relaxation), with the relaxations of the layers below
    if (layer > 1) tighten_unstable(net, layer, relus, centre, radius, l, u);
    bounds.lower.push_back(l), bounds.upper.push_back(u);
    if (layer + 1 == net.layers()) break;  // the output layer needs no forms
    relus.push_back(relax_relu(l, u));
    at::Tensor ws = stacked(net.w[layer]);
    z = next_forms(z, relus.back(), ws, net.b[layer], n);
    auto [fl, fu] = concretise(z, n);
    auto [il, iu] = ibp(l, u, ws, net.b[layer]);
    l = at::max(fl, il);  // both sound: intersect
    u = at::max(at::min(fu, iu), l);
  }
  DomainBatch d{xl, xu};
  FinalBound fb = final_bound(net, d, bounds, c, rhs);
  return {fb.lb, fb.a_input, std::move(bounds)};
}

at::Tensor conjunction_lower_bound(const at::Tensor& lb, const at::Tensor& a, const at::Tensor& xl,
                                   const at::Tensor& xu, int iterations) {
  at::NoGradGuard no_grad;
  at::Tensor best = std::get<0>(lb.max(1));  // the corners lambda = e_k
  const int64_t k = lb.size(1);
  if (k < 2 || lb.size(0) == 0) return best;
  at::Tensor finite = at::isfinite(lb).all(1);
  at::Tensor centre = (xl + xu) / 2, radius = (xu - xl) / 2;
  // g_k(x) >= a_k x + d_k with d_k = lb_k - min_box a_k x = lb_k - (a_k centre - |a_k| radius)
  at::Tensor d = lb - at::bmm(a, centre.unsqueeze(2)).squeeze(2) + at::bmm(a.abs(), radius.unsqueeze(2)).squeeze(2);
  d = at::where(finite.unsqueeze(1), d, at::zeros_like(d));  // boxes with an infinite row keep `best`
  at::Tensor lam = at::full_like(lb, 0.5 / k).scatter_add_(1, lb.argmax(1, true), at::full_like(best, 0.5).unsqueeze(1));
  double eta = 2.0;
  for (int t = 0; t < iterations; ++t) {
    at::Tensor s = at::bmm(lam.unsqueeze(1), a).squeeze(1);                      // s = sum_k lam_k a_k
    at::Tensor x = at::where(s > 0, xl, xu);                                     // argmin_box s x
    at::Tensor g = d + at::bmm(a, x.unsqueeze(2)).squeeze(2);                    // g_k = a_k x* + d_k
    at::Tensor val = (lam * g).sum(1) / lam.sum(1);                              // min_x sum lam_k (a_k x + d_k)
    best = at::where(finite, at::max(best, val), best);
    // exponentiated-gradient ascent on the simplex (the gradient of the concave dual is g)
    at::Tensor gmax = std::get<0>(g.max(1, true)), span = gmax - std::get<0>(g.min(1, true)) + 1e-12;
    lam = lam * at::exp(eta * (g - gmax) / span);
    lam = lam / lam.sum(1, true);
    eta *= 0.9;
  }
  return best;
}

at::Tensor alpha_conjunction_bound(const ReluNet& net, const at::Tensor& xl, const at::Tensor& xu, const at::Tensor& c,
                                   const at::Tensor& rhs, const LayerBounds& layers, const OptimiseOptions& options) {
  DomainBatch d{xl, xu};
  Relaxation relax;  // CROWN's adaptive slopes to start
  FinalBound best = optimise_final_bound(net, d, layers, c, rhs, relax, options);
  at::NoGradGuard no_grad;
  FinalBound last = final_bound(net, d, layers, c, rhs, relax);  // lb and a_input of one pass
  return at::max(std::get<0>(best.lb.max(1)), conjunction_lower_bound(last.lb, last.a_input, xl, xu));
}

}  // namespace tessera::lirpa::detail
