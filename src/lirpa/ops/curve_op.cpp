// The chord/tangent relaxation of convex or concave elementwise functions (curve_op.h).

#include "lirpa/ops/curve_op.h"

#include <limits>

namespace tessera::lirpa::detail {

namespace {

// Intervals narrower than this (relative to their magnitude) take the range's constant lines:
// the chord's slope would be a difference quotient of rounding noise.
constexpr double kMinRelativeWidth = 1e-9;

at::Tensor finite_or_zero(const at::Tensor& t) { return at::where(at::isfinite(t), t, at::zeros_like(t)); }

}  // namespace

at::Tensor CurveOp::default_alpha(const at::Tensor& l, const at::Tensor&) const { return at::full_like(l, 0.5); }

Interval CurveOp::ibp(const OpEnv&, const std::vector<Interval>& x) const {
  Interval d = domain(x[0].lower, x[0].upper);
  return range(d.lower, d.upper);
}

at::Tensor CurveOp::initial_alpha(const Interval& in) const {
  Interval d = domain(in.lower, in.upper);
  at::Tensor ok = d.upper > d.lower;  // elsewhere the slope parameter is never read
  return default_alpha(at::where(ok, d.lower, at::ones_like(d.lower)),
                       at::where(ok, d.upper, 2 * at::ones_like(d.upper)));
}

CurveRelaxation CurveOp::relax(const at::Tensor& l_in, const at::Tensor& u_in, const at::Tensor& alpha) const {
  Interval d = domain(l_in, u_in);
  const at::Tensor& l = d.lower;
  const at::Tensor& u = d.upper;
  // Stand-ins [1, 2] where a value is not used keep every expression below finite, so no NaN
  // reaches the where() nor alpha's gradient (0 * inf in a backward product).
  auto stand_in = [](const at::Tensor& keep, const at::Tensor& l, const at::Tensor& u) {
    return Interval{at::where(keep, l, at::ones_like(l)), at::where(keep, u, 2 * at::ones_like(u))};
  };
  at::Tensor finite = at::isfinite(l).logical_and(at::isfinite(u));
  Interval s = stand_in(finite, l, u);
  at::Tensor wide = finite.logical_and((s.upper - s.lower) > kMinRelativeWidth * (1 + s.lower.abs() + s.upper.abs()));
  Interval w = stand_in(wide, l, u);
  at::Tensor kind = at::where(wide, curvature(w.lower, w.upper), at::zeros_like(w.lower));
  at::Tensor convex = kind > 0, concave = kind < 0, lined = convex.logical_or(concave);
  Interval c = stand_in(lined, l, u);  // [l, u] where the lines are used
  // chord through (l, f(l)) and (u, f(u)): y = chord_d x + chord_b
  at::Tensor fl = f(c.lower), fu = f(c.upper);
  at::Tensor chord_d = (fu - fl) / (c.upper - c.lower);
  at::Tensor chord_b = fl - chord_d * c.lower;
  // tangent at t = tl + alpha (tu - tl): y = f'(t) x + f(t) - f'(t) t
  Interval tr = tangent_range(c.lower, c.upper);
  at::Tensor frac = alpha.defined() ? alpha.clamp(0, 1) : default_alpha(c.lower, c.upper);
  at::Tensor t = tr.lower + frac * (tr.upper - tr.lower);
  at::Tensor tan_d = df(t);
  at::Tensor tan_b = f(t) - tan_d * t;
  // constant lines of the exact range where no line is used (no gradient: values only)
  Interval r = range(l.detach(), u.detach());
  at::Tensor zero = at::zeros_like(chord_d);
  CurveRelaxation out;
  out.lines.lower_d = at::where(convex, tan_d, at::where(concave, chord_d, zero));
  out.lines.lower_b = at::where(convex, tan_b, at::where(concave, chord_b, zero + finite_or_zero(r.lower)));
  out.lines.upper_d = at::where(convex, chord_d, at::where(concave, tan_d, zero));
  out.lines.upper_b = at::where(convex, chord_b, at::where(concave, tan_b, zero + finite_or_zero(r.upper)));
  out.lower_unbounded = lined.logical_not().logical_and(at::isfinite(r.lower).logical_not());
  out.upper_unbounded = lined.logical_not().logical_and(at::isfinite(r.upper).logical_not());
  return out;
}

Backward CurveOp::backward(const OpEnv& env, const APtr& a, const BackwardContext& ctx) const {
  const Interval& in = ctx.input_bounds.at(0);
  at::Tensor l = in.lower.to(env.dtype), u = in.upper.to(env.dtype);
  if (ctx.alpha.defined()) {  // one tangent point per row: the bounds' row groups spread over the rows
    l = per_row(l, ctx.alpha.size(0));
    u = per_row(u, ctx.alpha.size(0));
  }
  return relaxed_backward_unbounded(a, relax(l, u, ctx.alpha), env.dtype);
}

Backward relaxed_backward_unbounded(const APtr& a, const CurveRelaxation& r, at::ScalarType dtype) {
  Backward out = relaxed_backward(a, r.lines, dtype);
  const bool lower_inf = r.lower_unbounded.any().item<bool>(), upper_inf = r.upper_unbounded.any().item<bool>();
  if (!lower_inf && !upper_inf) return out;
  // A row reading an unbounded line (A+ on an unbounded-below position, A- on an
  // unbounded-above one) has no finite lower bound: its bias becomes -inf.
  at::Tensor zero = at::zeros_like(r.lines.lower_d);
  at::Tensor hit = at::zeros({a->rows()}, at::TensorOptions().dtype(at::kBool));
  if (upper_inf) hit = hit.logical_or(a->relax({zero, {}, zero, r.upper_unbounded.to(dtype)}, dtype).bias < 0);
  if (lower_inf) hit = hit.logical_or(a->relax({zero, r.lower_unbounded.to(dtype), zero, {}}, dtype).bias > 0);
  out.bias = at::where(hit, at::full_like(out.bias, -std::numeric_limits<double>::infinity()), out.bias);
  return out;
}

}  // namespace tessera::lirpa::detail
