// Gelu (ONNX Gelu, approximate = "none"): y = g(x) = x Phi(x) = x (1 + erf(x / sqrt2)) / 2.
// g'(x) = Phi(x) + x phi(x) and g''(x) = phi(x) (2 - x^2): g is concave on (-inf, -sqrt2],
// convex on [-sqrt2, sqrt2] and concave on [sqrt2, inf), so g' decreases, increases, then
// decreases on those pieces; g's one critical point is its global minimum at x_min ~ -0.7518.
// Relaxation on [l, u] (neither convex nor concave in general): both lines take the chord's
// slope k = (g(u) - g(l)) / (u - l) and, as intercepts, the extremes of h(x) = g(x) - k x on
// [l, u]:
//   k x + min h <= g(x) <= k x + max h,
// sound for any k. h's extremes lie at l and u (where h takes one value, by the choice of k)
// or at a root of h' = g' - k; g' is monotone on each piece, so each piece meets at most one
// root in [l, u], found by bisection. At a root h' = 0 and |h''| = |g''| <= 2 phi(0) < 0.8, so
// a point within delta of it is within 0.4 delta^2 of the extreme: that margin is added.
// Where g is convex the upper line is the chord and the lower one its parallel tangent (the
// reverse where concave).
// IBP: [min(g(l), g(u), g(x_min) when x_min is in [l, u]), max(g(l), g(u))].
// Infinite ends: lower line the constant g(x_min); upper the constant max(0, g(u)) when only
// l = -inf (g -> 0 there), unbounded when u = inf (curve_op.h's -inf rows).

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

#include "lirpa/ops/curve_op.h"
#include "lirpa/ops/registry.h"
#include "tessera/core/error.h"

namespace tessera::lirpa::detail {

namespace {

constexpr double kSqrt2 = 1.4142135623730951;
constexpr int kBisections = 64;  // bracket width (u - l) 2^-64

at::Tensor gelu_at(const at::Tensor& x) { return 0.5 * x * (1 + at::erf(x / kSqrt2)); }

at::Tensor gelu_slope(const at::Tensor& x) {  // g'(x) = Phi(x) + x phi(x)
  return 0.5 * (1 + at::erf(x / kSqrt2)) + x * at::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
}

/// The global minimum g(x_min) (less a rounding margin): x_min is the root of g' in
/// [-sqrt2, 0], where g' increases from g'(-sqrt2) < 0 to g'(0) = 1/2.
double gelu_minimum() {
  static const double value = [] {
    auto slope = [](double x) {
      return 0.5 * (1 + std::erf(x / kSqrt2)) + x * std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
    };
    double a = -kSqrt2, b = 0;
    for (int i = 0; i < 200; ++i) {
      double m = 0.5 * (a + b);
      (slope(m) < 0 ? a : b) = m;
    }
    double x = 0.5 * (a + b);
    return 0.5 * x * (1 + std::erf(x / kSqrt2)) - 1e-15;
  }();
  return value;
}

/// g at the ends of possibly infinite intervals: g(-inf) = 0, g(inf) = inf.
at::Tensor gelu_extended(const at::Tensor& x) {
  return at::where(x == -std::numeric_limits<double>::infinity(), at::zeros_like(x), gelu_at(x));
}

}  // namespace

class GeluOp final : public BoundOp {
 public:
  std::string type() const override { return "Gelu"; }
  bool needs_input_bounds() const override { return true; }
  at::Tensor forward(const OpEnv&, const std::vector<at::Tensor>& x) const override { return gelu_at(x[0]); }

  Interval ibp(const OpEnv&, const std::vector<Interval>& x) const override {
    const at::Tensor &l = x[0].lower, &u = x[0].upper;
    at::Tensor gl = gelu_extended(l), gu = gelu_extended(u);
    // [l, u] meets [-0.76, -0.75], which holds x_min: g(x_min) is a lower bound
    at::Tensor near_min = (l <= -0.75).logical_and(u >= -0.76);
    at::Tensor ends = at::min(gl, gu);
    return {at::where(near_min, ends.clamp_max(gelu_minimum()), ends), at::max(gl, gu)};
  }

  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext& ctx) const override {
    const Interval& in = ctx.input_bounds.at(0);
    return relaxed_backward_unbounded(a, relax(in.lower.to(env.dtype), in.upper.to(env.dtype)), env.dtype);
  }

  static CurveRelaxation relax(const at::Tensor& l, const at::Tensor& u) {
    at::Tensor finite = at::isfinite(l).logical_and(at::isfinite(u));
    at::Tensor ls = at::where(finite, l, at::zeros_like(l)), us = at::where(finite, u, at::ones_like(u));
    at::Tensor w = us - ls;
    at::Tensor gl = gelu_at(ls), gu = gelu_at(us);
    at::Tensor k = at::where(w > 0, (gu - gl) / at::where(w > 0, w, at::ones_like(w)), gelu_slope(ls));  // chord slope
    at::Tensor hl = gl - k * ls, hu = gu - k * us;  // h(l) = h(u) up to rounding
    at::Tensor hmin = at::min(hl, hu), hmax = at::max(hl, hu);
    const double inf = std::numeric_limits<double>::infinity();
    const std::pair<double, double> pieces[] = {{-inf, -kSqrt2}, {-kSqrt2, kSqrt2}, {kSqrt2, inf}};  // g' monotone
    for (auto [pa, pb] : pieces) {
      at::Tensor lo = ls.clamp_min(pa), hi = us.clamp_max(pb);
      at::Tensor fa = gelu_slope(lo) - k, fb = gelu_slope(hi) - k;
      at::Tensor has_root = (lo < hi).logical_and(fa * fb <= 0);
      for (int i = 0; i < kBisections; ++i) {  // keep g' - k of opposite signs at lo and hi
        at::Tensor m = 0.5 * (lo + hi);
        at::Tensor same_as_lo = (gelu_slope(m) - k) * fa > 0;
        lo = at::where(same_as_lo, m, lo);
        hi = at::where(same_as_lo, hi, m);
      }
      at::Tensor x = 0.5 * (lo + hi), delta = hi - lo;
      at::Tensor hx = gelu_at(x) - k * x, margin = 0.4 * delta * delta;
      hmin = at::where(has_root, at::min(hmin, hx - margin), hmin);
      hmax = at::where(has_root, at::max(hmax, hx + margin), hmax);
    }
    at::Tensor zero = at::zeros_like(k);
    at::Tensor u_safe = at::where(at::isfinite(u), u, zero);
    CurveRelaxation out;
    out.lines.lower_d = at::where(finite, k, zero);
    out.lines.lower_b = at::where(finite, hmin, zero + gelu_minimum());
    out.lines.upper_d = at::where(finite, k, zero);
    out.lines.upper_b = at::where(finite, hmax, gelu_at(u_safe).clamp_min(0));
    out.lower_unbounded = at::zeros_like(finite);
    out.upper_unbounded = finite.logical_not().logical_and(u == inf);
    return out;
  }
};

void register_gelu(OpRegistry& r) {
  r.add("Gelu", [](const OnnxNode& n) -> BuiltOp {
    auto it = n.attrs.find("approximate");
    TESSERA_CHECK(it == n.attrs.end() || it->second.s == "none", Unsupported, "Gelu node '", n.name,
                  "': only approximate = \"none\" is supported");
    return {std::make_shared<GeluOp>(), {n.inputs.at(0).node}};
  });
}

}  // namespace tessera::lirpa::detail
