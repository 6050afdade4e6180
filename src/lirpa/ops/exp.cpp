// Exp: y = e^x, convex and increasing, relaxed by CurveOp (curve_op.h):
//   e^t (1 + x - t) <= e^x <= e^l + (e^u - e^l) / (u - l) (x - l)   on [l, u].
// CROWN's tangent point: t = min((l + u) / 2, l + 0.99). The tangent e^t (1 + x - t) is zero
// at x = t - 1, so t <= l + 0.99 keeps the lower line positive on the whole box; sums of
// exponentials (softmax denominators) then keep positive lower bounds, which Reciprocal
// needs. alpha-CROWN moves t over [l, u].
// Overflow: where u > 60 (e^60 ~ 1e26, finite in float32 with room for weights) no line is
// built; the constant lines of the range [e^l, e^u] are used instead, and where e^u is inf
// the upper side is unbounded (rows reading it get -inf, curve_op.cpp), never inf * 0.

#include <ATen/ATen.h>

#include "lirpa/ops/curve_op.h"
#include "lirpa/ops/registry.h"

namespace tessera::lirpa::detail {

namespace {
constexpr double kExpLineMax = 60;  // largest u with chord and tangent lines
}

class ExpOp final : public CurveOp {
 public:
  std::string type() const override { return "Exp"; }

 protected:
  at::Tensor f(const at::Tensor& x) const override { return at::exp(x); }
  at::Tensor df(const at::Tensor& x) const override { return at::exp(x); }  // (e^x)' = e^x
  Interval range(const at::Tensor& l, const at::Tensor& u) const override { return {at::exp(l), at::exp(u)}; }
  at::Tensor curvature(const at::Tensor&, const at::Tensor& u) const override {
    return (u <= kExpLineMax).to(u.scalar_type());  // convex; no lines past the overflow guard
  }
  at::Tensor default_alpha(const at::Tensor& l, const at::Tensor& u) const override {
    return at::clamp_max(0.99 / (u - l), 0.5);  // t = l + alpha (u - l) = min(mid, l + 0.99)
  }
};

void register_exp(OpRegistry& r) {
  r.add("Exp", [](const OnnxNode& n) -> BuiltOp { return {std::make_shared<ExpOp>(), {n.inputs.at(0).node}}; });
}

}  // namespace tessera::lirpa::detail
