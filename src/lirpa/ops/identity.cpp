// Identity: y = x (ONNX Identity, and Dropout at inference).

#include "lirpa/ops/op_util.h"
#include "lirpa/ops/registry.h"

namespace tessera::lirpa::detail {

class IdentityOp final : public BoundOp {
 public:
  std::string type() const override { return "Identity"; }
  at::Tensor forward(const OpEnv&, const std::vector<at::Tensor>& x) const override { return x[0]; }
  Interval ibp(const OpEnv&, const std::vector<Interval>& x) const override { return x[0]; }
  std::optional<LinearForms> forward_forms(const OpEnv&, const std::vector<LinearForms>& x,
                                           const std::vector<Interval>&) const override {
    return x[0];
  }
  Backward backward(const OpEnv&, const APtr& a, const BackwardContext&) const override { return {{a}, {}}; }
};

void register_identity(OpRegistry& r) {
  auto build = [](const OnnxNode& n) -> BuiltOp { return {std::make_shared<IdentityOp>(), {n.inputs.at(0).node}}; };
  r.add("Identity", build);
  r.add("Dropout", build);
}

}  // namespace tessera::lirpa::detail
