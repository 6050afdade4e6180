// Concat: y = [x_1, ..., x_k] along one axis (all operands variable).

#include <ATen/ATen.h>

#include "lirpa/ops/op_util.h"
#include "lirpa/ops/registry.h"
#include "tessera/core/error.h"

namespace tessera::lirpa::detail {

class ConcatOp final : public BoundOp {
 public:
  ConcatOp(int64_t axis, std::vector<int64_t> sizes) : axis_(axis), sizes_(std::move(sizes)) {}
  std::string type() const override { return "Concat"; }
  at::Tensor forward(const OpEnv&, const std::vector<at::Tensor>& x) const override {
    return at::cat(x, axis_ + 1);
  }
  Interval ibp(const OpEnv&, const std::vector<Interval>& x) const override {
    std::vector<at::Tensor> l, u;
    for (const auto& b : x) {
      l.push_back(b.lower);
      u.push_back(b.upper);
    }
    return {at::cat(l, axis_ + 1), at::cat(u, axis_ + 1)};
  }
  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext&) const override {
    auto parts = at::split_with_sizes(a->dense(env.dtype), sizes_, axis_ + 1);  // A_i = A_y[..., part i]
    Backward out;
    for (auto& p : parts) out.inputs.push_back(DenseA::make(p.contiguous()));
    return out;
  }

 private:
  int64_t axis_;
  std::vector<int64_t> sizes_;
};

void register_concat(OpRegistry& r) {
  r.add("Concat", [](const OnnxNode& n) -> BuiltOp {
    TESSERA_CHECK(n.variable_count() == static_cast<int>(n.inputs.size()), Unsupported, "Concat node '", n.name,
                  "': mixing constant and variable operands is not supported");
    int64_t rank = static_cast<int64_t>(n.inputs.at(0).shape.size());
    int64_t axis = n.attr_int("axis", 0);
    if (axis < 0) axis += rank;
    BuiltOp out;
    std::vector<int64_t> sizes;
    for (const auto& in : n.inputs) {
      sizes.push_back(in.shape.at(axis));
      out.inputs.push_back(in.node);
    }
    out.op = std::make_shared<ConcatOp>(axis, sizes);
    return out;
  });
}

}  // namespace tessera::lirpa::detail
