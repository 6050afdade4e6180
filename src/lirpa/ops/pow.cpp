// Pow with the constant exponent 2: y = x^2, convex, relaxed by CurveOp (curve_op.h):
//   2 t x - t^2 <= x^2 <= (l + u) x - l u   on [l, u]
// (the tangent at t, the chord through (l, l^2) and (u, u^2)); CROWN's t is the midpoint.
// Range: [l^2, u^2] for l >= 0, [u^2, l^2] for u <= 0, [0, max(l^2, u^2)] across 0.
// Beyond |x| = 10^15 the squares near float32's limit: constant lines of the range there.

#include <ATen/ATen.h>

#include "lirpa/ops/curve_op.h"
#include "lirpa/ops/registry.h"
#include "tessera/core/error.h"

namespace tessera::lirpa::detail {

namespace {
constexpr double kLineMaxMagnitude = 1e15;
}

class SquareOp final : public CurveOp {
 public:
  std::string type() const override { return "Pow2"; }

 protected:
  at::Tensor f(const at::Tensor& x) const override { return x * x; }
  at::Tensor df(const at::Tensor& x) const override { return 2 * x; }  // (x^2)' = 2x
  Interval range(const at::Tensor& l, const at::Tensor& u) const override {
    at::Tensor l2 = l * l, u2 = u * u;
    at::Tensor across = (l < 0).logical_and(u > 0);
    return {at::where(across, at::zeros_like(l), at::min(l2, u2)), at::max(l2, u2)};
  }
  at::Tensor curvature(const at::Tensor& l, const at::Tensor& u) const override {
    return (at::max(l.abs(), u.abs()) <= kLineMaxMagnitude).to(l.scalar_type());  // (x^2)'' = 2 > 0
  }
};

void register_pow(OpRegistry& r) {
  r.add("Pow", [](const OnnxNode& n) -> BuiltOp {
    TESSERA_CHECK(n.inputs.size() == 2 && !n.inputs[0].is_const() && n.inputs[1].is_const(), Unsupported,
                  "Pow node '", n.name, "': only a variable base with a constant exponent is supported");
    at::Tensor e = n.inputs[1].value.to(at::kDouble);
    TESSERA_CHECK(e.numel() > 0 && (e == 2).all().item<bool>(), Unsupported, "Pow node '", n.name,
                  "': only the exponent 2 is supported");
    return {std::make_shared<SquareOp>(), {n.inputs[0].node}};
  });
}

}  // namespace tessera::lirpa::detail
