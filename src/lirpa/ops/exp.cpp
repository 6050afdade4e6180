// Exp: y = e^x, convex and increasing, relaxed by CurveOp (curve_op.h):
//   e^t (1 + x - t) <= e^x <= e^l + (e^u - e^l) / (u - l) (x - l)   on [l, u].
// The tangent point t moves in [l, min(u, l + 0.99)]: the tangent e^t (1 + x - t) is zero at
// x = t - 1, so t <= l + 0.99 keeps the lower line positive on the whole box, and sums of
// exponentials (softmax denominators) keep positive lower bounds, which Reciprocal needs
// (a tangent further right would be tighter near u, but a sum bounded below by 0 makes the
// reciprocal unbounded, also for alpha-CROWN's intermediate bounds, which are not intersected
// with CROWN's without `intersect_ibp`). CROWN's t = min((l + u) / 2, l + 0.99); alpha-CROWN moves t over the range.
// Overflow: where u > 60 (e^60 ~ 1e26, finite in float32 with room for weights) no line is
// built; the constant lines of the range [e^l, e^u] are used instead, and where e^u is inf
// the upper side is unbounded (rows reading it get -inf, curve_op.cpp), never inf * 0.

#include <ATen/ATen.h>

#include "lirpa/ops/curve_op.h"
#include "lirpa/ops/registry.h"

namespace tessera::lirpa::detail {

namespace {
constexpr double kExpLineMax = 60;      // largest u with chord and tangent lines
constexpr double kTangentReach = 0.99;  // t - l at most: the tangent stays positive on [l, u]
}

class ExpOp final : public CurveOp {
 public:
  std::string type() const override { return "Exp"; }
  bool monotone() const override { return true; }

 protected:
  at::Tensor f(const at::Tensor& x) const override { return at::exp(x); }
  at::Tensor df(const at::Tensor& x) const override { return at::exp(x); }  // (e^x)' = e^x
  Interval range(const at::Tensor& l, const at::Tensor& u) const override { return {at::exp(l), at::exp(u)}; }
  at::Tensor curvature(const at::Tensor&, const at::Tensor& u) const override {
    return (u <= kExpLineMax).to(u.scalar_type());  // convex; no lines past the overflow guard
  }
  Interval tangent_range(const at::Tensor& l, const at::Tensor& u) const override {
    return {l, at::min(u, l + kTangentReach)};
  }
  at::Tensor default_alpha(const at::Tensor& l, const at::Tensor& u) const override {
    // t = l + alpha (min(u, l + 0.99) - l) = min(mid, l + 0.99)
    return at::clamp_max((u - l) / 2, kTangentReach) / at::clamp_max(u - l, kTangentReach);
  }
};

void register_exp(OpRegistry& r) {
  r.add("Exp", [](const OnnxNode& n) -> BuiltOp { return {std::make_shared<ExpOp>(), {n.inputs.at(0).node}}; });
}

}  // namespace tessera::lirpa::detail
