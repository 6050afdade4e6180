// Transpose: y = x with its axes permuted by `perm`.

#include <ATen/ATen.h>

#include "lirpa/ops/op_util.h"
#include "lirpa/ops/registry.h"

namespace tessera::lirpa::detail {

class TransposeOp final : public BoundOp {
 public:
  explicit TransposeOp(std::vector<int64_t> perm) : perm_(std::move(perm)) {}
  std::string type() const override { return "Transpose"; }
  at::Tensor forward(const OpEnv&, const std::vector<at::Tensor>& x) const override {
    return x[0].permute(lead(perm_)).contiguous();
  }
  Interval ibp(const OpEnv& env, const std::vector<Interval>& x) const override {
    return {forward(env, {x[0].lower}), forward(env, {x[0].upper})};
  }
  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext&) const override {
    std::vector<int64_t> inverse(perm_.size());
    for (size_t i = 0; i < perm_.size(); ++i) inverse[perm_[i]] = static_cast<int64_t>(i);
    return {{DenseA::make(a->dense(env.dtype).permute(lead(inverse)).contiguous())}, {}};  // A_x = P^T A_y
  }

 private:
  static std::vector<int64_t> lead(const std::vector<int64_t>& p) {
    std::vector<int64_t> out{0};
    for (int64_t v : p) out.push_back(v + 1);
    return out;
  }
  std::vector<int64_t> perm_;
};

void register_transpose(OpRegistry& r) {
  r.add("Transpose", [](const OnnxNode& n) -> BuiltOp {
    const auto& in = n.inputs.at(0);
    std::vector<int64_t> perm = n.attr_ints("perm", {});
    if (perm.empty())
      for (int64_t i = static_cast<int64_t>(in.shape.size()) - 1; i >= 0; --i) perm.push_back(i);
    return {std::make_shared<TransposeOp>(perm), {in.node}};
  });
}

}  // namespace tessera::lirpa::detail
