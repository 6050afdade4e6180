// Erf: y = erf(x) = 2 / sqrt(pi) * integral_0^x e^(-s^2) ds, increasing, convex for x < 0 and
// concave for x > 0, its derivative 2 / sqrt(pi) e^(-x^2) unimodal with its peak at 0: an
// S-curve, relaxed by s_curve.cpp's chord/tangent lines.

#include <ATen/ATen.h>

#include <cmath>

#include "lirpa/ops/registry.h"
#include "lirpa/ops/s_curve.h"

namespace tessera::lirpa::detail {

class ErfOp final : public SCurveOp {
 public:
  std::string type() const override { return "Erf"; }

 protected:
  at::Tensor f(const at::Tensor& x) const override { return at::erf(x); }
  at::Tensor df(const at::Tensor& x) const override {
    return (2.0 / std::sqrt(M_PI)) * at::exp(-x * x);  // erf'(x) = 2 / sqrt(pi) e^(-x^2)
  }
};

void register_erf(OpRegistry& r) {
  r.add("Erf", [](const OnnxNode& n) -> BuiltOp { return {std::make_shared<ErfOp>(), {n.inputs.at(0).node}}; });
}

}  // namespace tessera::lirpa::detail
