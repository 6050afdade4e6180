#pragma once
// Bound operator for elementwise functions that are convex or concave on each input interval
// they are relaxed on (Exp, Reciprocal, Sqrt, Pow with exponent 2). On [l, u]:
//   convex:  f(t) + f'(t) (x - t) <= f(x) <= chord(x)   (lower = tangent, upper = chord)
//   concave: chord(x) <= f(x) <= f(t) + f'(t) (x - t)   (lower = chord, upper = tangent)
// with chord(x) = f(l) + (f(u) - f(l)) / (u - l) (x - l). The chord lies above a convex f
// between its ends and a tangent lies below a convex f everywhere (the reverse when
// concave), so both lines are sound for any tangent point t. t = tl + alpha (tu - tl) on the
// operator's tangent range [tl, tu] within [l, u]: alpha in [0, 1] is alpha-CROWN's
// optimisable slope parameter, per row, and CROWN takes the operator's default.
// Elsewhere (curvature 0: a narrow interval, one the lines would overflow on, or one mixing
// convex and concave parts) the lines are the constants of the exact range [f_min, f_max]
// (slope 0); an infinite end there marks the position unbounded on that side: its line is
// set to 0 and every row that would read it gets bias -inf (never inf * 0 = NaN in a product).

#include "lirpa/ops/op_util.h"

namespace tessera::lirpa::detail {

/// The lines of a CurveOp on a box, and the positions without a finite line on each side.
struct CurveRelaxation {
  Relaxation lines;
  at::Tensor lower_unbounded, upper_unbounded;  ///< bool, shaped like the lines
};

/// The backward step of `lines` where the rows reading an unbounded side (A+ on a position
/// unbounded below, A- on one unbounded above) get bias -inf: relaxed_backward otherwise.
Backward relaxed_backward_unbounded(const APtr& a, const CurveRelaxation& r, at::ScalarType dtype);

class CurveOp : public BoundOp {
 public:
  bool needs_input_bounds() const override { return true; }
  bool has_alpha() const override { return true; }
  at::Tensor forward(const OpEnv&, const std::vector<at::Tensor>& x) const override { return f(x[0]); }
  Interval ibp(const OpEnv&, const std::vector<Interval>& x) const override;
  at::Tensor initial_alpha(const Interval& in) const override;
  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext& ctx) const override;
  /// The relaxation on [l, u] with tangent fractions `alpha` (undefined: the default);
  /// l, u, alpha broadcast together (public for tests).
  CurveRelaxation relax(const at::Tensor& l, const at::Tensor& u, const at::Tensor& alpha = {}) const;

 protected:
  virtual at::Tensor f(const at::Tensor& x) const = 0;
  virtual at::Tensor df(const at::Tensor& x) const = 0;
  /// The exact range of f on [l, u] (ends may be infinite); l, u already in the domain.
  virtual Interval range(const at::Tensor& l, const at::Tensor& u) const = 0;
  /// +1 where the lines are convex ones, -1 concave ones, 0 constant lines from the range;
  /// only asked for finite intervals of positive width in the domain.
  virtual at::Tensor curvature(const at::Tensor& l, const at::Tensor& u) const = 0;
  /// The bounds clipped to the operator's domain (default: unchanged).
  virtual Interval domain(const at::Tensor& l, const at::Tensor& u) const { return {l, u}; }
  /// The interval the tangent point moves in (default: [l, u]).
  virtual Interval tangent_range(const at::Tensor& l, const at::Tensor& u) const { return {l, u}; }
  /// CROWN's tangent fraction (default 0.5: the middle of the tangent range).
  virtual at::Tensor default_alpha(const at::Tensor& l, const at::Tensor& u) const;
};

}  // namespace tessera::lirpa::detail
