// Sigmoid: y = 1 / (1 + exp(-x)), relaxed as an S-curve (s_curve.cpp).

#include "lirpa/ops/registry.h"
#include "lirpa/ops/s_curve.h"

namespace tessera::lirpa::detail {

class SigmoidOp final : public SCurveOp {
 public:
  std::string type() const override { return "Sigmoid"; }

 protected:
  at::Tensor f(const at::Tensor& x) const override { return at::sigmoid(x); }
  at::Tensor df(const at::Tensor& x) const override {
    at::Tensor s = at::sigmoid(x);
    return s * (1 - s);  // s' = s (1 - s)
  }
};

void register_sigmoid(OpRegistry& r) {
  r.add("Sigmoid", [](const OnnxNode& n) -> BuiltOp {
    return {std::make_shared<SigmoidOp>(), {n.inputs.at(0).node}};
  });
}

std::shared_ptr<const SCurveOp> make_sigmoid() { return std::make_shared<SigmoidOp>(); }

}  // namespace tessera::lirpa::detail
