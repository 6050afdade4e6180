// Reciprocal: y = 1 / x, relaxed by CurveOp (curve_op.h) on intervals of one sign:
// - l > 0: convex and decreasing; upper = chord (l + u - x) / (l u), lower = the tangent
//   (2 t - x) / t^2 at t in [l, u] (CROWN: the midpoint);
// - u < 0: concave; lower = chord, upper = tangent.
// Intervals that contain or touch 0 have the range (-inf, inf): both sides unbounded (rows
// reading them get -inf, never NaN). Intervals within 1e-6 of 0 on one side take the
// constant lines of their finite range [1/u, 1/l] (the tangents' slopes -1/t^2 would reach
// 10^12 and more).

#include <ATen/ATen.h>

#include <limits>

#include "lirpa/ops/curve_op.h"
#include "lirpa/ops/registry.h"

namespace tessera::lirpa::detail {

namespace {
constexpr double kLineMinMagnitude = 1e-6;  // smallest |x| of an interval relaxed by lines
}

class ReciprocalOp final : public CurveOp {
 public:
  std::string type() const override { return "Reciprocal"; }
  bool monotone() const override { return true; }

 protected:
  at::Tensor f(const at::Tensor& x) const override { return at::reciprocal(x); }
  at::Tensor df(const at::Tensor& x) const override { return -at::reciprocal(x * x); }  // (1/x)' = -1/x^2
  Interval range(const at::Tensor& l, const at::Tensor& u) const override {
    // one sign: 1/x decreasing, [1/u, 1/l]; across 0: (-inf, inf)
    at::Tensor one_sign = (l > 0).logical_or(u < 0);
    const double inf = std::numeric_limits<double>::infinity();
    return {at::where(one_sign, at::reciprocal(u), at::full_like(u, -inf)),
            at::where(one_sign, at::reciprocal(l), at::full_like(l, inf))};
  }
  at::Tensor curvature(const at::Tensor& l, const at::Tensor& u) const override {
    at::Tensor convex = (l >= kLineMinMagnitude).to(l.scalar_type());   // (1/x)'' = 2/x^3 > 0 for x > 0
    at::Tensor concave = (u <= -kLineMinMagnitude).to(l.scalar_type());  // < 0 for x < 0
    return convex - concave;
  }
};

void register_reciprocal(OpRegistry& r) {
  r.add("Reciprocal",
        [](const OnnxNode& n) -> BuiltOp { return {std::make_shared<ReciprocalOp>(), {n.inputs.at(0).node}}; });
}

}  // namespace tessera::lirpa::detail
