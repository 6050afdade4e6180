// Relaxation of S-shaped activations, sound on every interval [l, u]:
// - u <= 0 (convex part): upper = chord, lower = tangent at the midpoint;
// - l >= 0 (concave part): lower = chord, upper = tangent at the midpoint;
// - l < 0 < u, or a tiny interval: lines of slope k = min(f'(l), f'(u)) (the least slope on
//   [l, u], f' being unimodal with its peak at 0) through (l, f(l)) below and (u, f(u)) above:
//   f(x) - f(l) >= k (x - l) and f(u) - f(x) >= k (u - x) for x in [l, u].

#include "lirpa/ops/s_curve.h"

namespace tessera::lirpa::detail {

Relaxation SCurveOp::relax(const at::Tensor& l, const at::Tensor& u) const {
  at::Tensor fl = f(l), fu = f(u);
  at::Tensor k = at::min(df(l), df(u));
  // safe lines: y >= fl + k (x - l), y <= fu + k (x - u)
  at::Tensor lower_d = k, lower_b = fl - k * l;
  at::Tensor upper_d = k, upper_b = fu - k * u;
  at::Tensor width = u - l;
  at::Tensor wide = width > 1e-6;
  at::Tensor chord_d = (fu - fl) / at::where(wide, width, at::ones_like(width));
  at::Tensor chord_b = fl - chord_d * l;
  at::Tensor m = (l + u) / 2;
  at::Tensor tan_d = df(m), tan_b = f(m) - tan_d * m;
  at::Tensor convex = wide.logical_and(u <= 0), concave = wide.logical_and(l >= 0);
  upper_d = at::where(convex, chord_d, at::where(concave, tan_d, upper_d));
  upper_b = at::where(convex, chord_b, at::where(concave, tan_b, upper_b));
  lower_d = at::where(convex, tan_d, at::where(concave, chord_d, lower_d));
  lower_b = at::where(convex, tan_b, at::where(concave, chord_b, lower_b));
  return {lower_d, lower_b, upper_d, upper_b};
}

Backward SCurveOp::backward(const OpEnv& env, const APtr& a, const BackwardContext& ctx) const {
  const Interval& in = ctx.input_bounds.at(0);
  return relaxed_backward(a, relax(in.lower.to(env.dtype), in.upper.to(env.dtype)), env.dtype);
}

}  // namespace tessera::lirpa::detail
