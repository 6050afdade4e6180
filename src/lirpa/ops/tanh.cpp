// Tanh, relaxed as an S-curve (s_curve.cpp).

#include "lirpa/ops/registry.h"
#include "lirpa/ops/s_curve.h"

namespace tessera::lirpa::detail {

class TanhOp final : public SCurveOp {
 public:
  std::string type() const override { return "Tanh"; }

 protected:
  at::Tensor f(const at::Tensor& x) const override { return at::tanh(x); }
  at::Tensor df(const at::Tensor& x) const override {
    at::Tensor t = at::tanh(x);
    return 1 - t * t;  // tanh' = 1 - tanh^2
  }
};

void register_tanh(OpRegistry& r) {
  r.add("Tanh", [](const OnnxNode& n) -> BuiltOp {
    return {std::make_shared<TanhOp>(), {n.inputs.at(0).node}};
  });
}

std::shared_ptr<const SCurveOp> make_tanh() { return std::make_shared<TanhOp>(); }

}  // namespace tessera::lirpa::detail
