// Sqrt: y = sqrt(x) on its domain x >= 0, concave and increasing, relaxed by CurveOp
// (curve_op.h) on [l, u] with l, u clipped to 0 (bounds below 0 are loose bounds of values
// that are >= 0 wherever sqrt is defined; ONNX gives NaN below 0):
//   sqrt(l) + (x - l) / (sqrt(l) + sqrt(u)) <= sqrt(x) <= sqrt(t) + (x - t) / (2 sqrt(t))
// (the chord's slope (sqrt(u) - sqrt(l)) / (u - l) = 1 / (sqrt(l) + sqrt(u))). The tangent
// point moves in [max(l, u / 10^4), u] so its slope 1 / (2 sqrt(t)) stays finite when l = 0;
// CROWN takes the middle of that range.

#include <ATen/ATen.h>

#include "lirpa/ops/curve_op.h"
#include "lirpa/ops/registry.h"

namespace tessera::lirpa::detail {

class SqrtOp final : public CurveOp {
 public:
  std::string type() const override { return "Sqrt"; }
  bool monotone() const override { return true; }

 protected:
  at::Tensor f(const at::Tensor& x) const override { return at::sqrt(x); }
  at::Tensor df(const at::Tensor& x) const override { return 0.5 / at::sqrt(x); }  // 1 / (2 sqrt(x))
  Interval domain(const at::Tensor& l, const at::Tensor& u) const override {
    return {l.clamp_min(0), u.clamp_min(0)};
  }
  Interval range(const at::Tensor& l, const at::Tensor& u) const override { return {at::sqrt(l), at::sqrt(u)}; }
  at::Tensor curvature(const at::Tensor& l, const at::Tensor&) const override {
    return -at::ones_like(l);  // (sqrt x)'' = -x^(-3/2) / 4 < 0
  }
  Interval tangent_range(const at::Tensor& l, const at::Tensor& u) const override {
    return {at::max(l, u * 1e-4), u};
  }
};

void register_sqrt(OpRegistry& r) {
  r.add("Sqrt", [](const OnnxNode& n) -> BuiltOp { return {std::make_shared<SqrtOp>(), {n.inputs.at(0).node}}; });
}

}  // namespace tessera::lirpa::detail
