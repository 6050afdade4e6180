// Concat: y = [x_1, ..., x_k] along one axis; operands are variables or constants (a
// transformer's class token joined to its patch embeddings). Linear and exact.

#include <ATen/ATen.h>

#include "lirpa/ops/op_util.h"
#include "lirpa/ops/registry.h"
#include "tessera/core/error.h"

namespace tessera::lirpa::detail {

/// One operand: a variable input (`key` empty) or a constant from the store.
struct ConcatPart {
  int64_t size;     // extent along the axis
  std::string key;  // store key of a constant operand
};

class ConcatOp final : public BoundOp {
 public:
  ConcatOp(int64_t axis, std::vector<ConcatPart> parts) : axis_(axis), parts_(std::move(parts)) {}
  std::string type() const override { return "Concat"; }
  at::Tensor forward(const OpEnv& env, const std::vector<at::Tensor>& x) const override {
    return at::cat(operands(env, x), axis_ + 1);
  }
  Interval ibp(const OpEnv& env, const std::vector<Interval>& x) const override {
    std::vector<at::Tensor> l, u;
    for (const auto& b : x) {
      l.push_back(b.lower);
      u.push_back(b.upper);
    }
    return {forward(env, l), forward(env, u)};  // a constant is its own bounds
  }
  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext&) const override {
    std::vector<int64_t> sizes;
    for (const auto& p : parts_) sizes.push_back(p.size);
    at::Tensor ad = a->dense(env.dtype);
    auto blocks = at::split_with_sizes(ad, sizes, axis_ + 1);  // A_i = A_y[..., part i]
    Backward out;
    at::Tensor bias;
    for (size_t i = 0; i < parts_.size(); ++i) {
      if (parts_[i].key.empty()) {
        out.inputs.push_back(DenseA::make(blocks[i].contiguous()));
        continue;
      }
      // a constant part c adds sum_i A_c[s, i] c[i] to row s
      at::Tensor c = env.params.get(parts_[i].key, env.dtype).expand(tail_shape(blocks[i]));
      at::Tensor t = (blocks[i] * c).reshape({ad.size(0), -1}).sum(1);
      bias = bias.defined() ? bias + t : t;
    }
    out.bias = bias;
    return out;
  }

 private:
  /// The operands in order, constants broadcast over the leading batch dimension.
  std::vector<at::Tensor> operands(const OpEnv& env, const std::vector<at::Tensor>& x) const {
    std::vector<at::Tensor> all;
    size_t next = 0;
    for (const auto& p : parts_) {
      if (p.key.empty()) {
        all.push_back(x.at(next++));
        continue;
      }
      at::Tensor c = env.params.get(p.key, env.dtype);
      auto shape = x.at(0).sizes().vec();
      shape[axis_ + 1] = p.size;
      all.push_back(c.unsqueeze(0).expand(shape).to(x.at(0).scalar_type()));
    }
    return all;
  }

  int64_t axis_;
  std::vector<ConcatPart> parts_;
};

void register_concat(OpRegistry& r) {
  r.add("Concat", [](const OnnxNode& n) -> BuiltOp {
    TESSERA_CHECK(!n.inputs.empty(), ParseError, "Concat node '", n.name, "' has no inputs");
    const int64_t rank = static_cast<int64_t>(n.inputs.at(0).shape.size());
    int64_t axis = n.attr_int("axis", 0);
    if (axis < 0) axis += rank;
    TESSERA_CHECK(axis >= 0 && axis < rank, ParseError, "Concat node '", n.name, "': axis ", n.attr_int("axis", 0),
                  " is outside a tensor of rank ", rank);
    BuiltOp out;
    std::vector<ConcatPart> parts;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const NodeInput& in = n.inputs[i];
      TESSERA_CHECK(static_cast<int64_t>(in.shape.size()) == rank, ParseError, "Concat node '", n.name,
                    "': operands of rank ", rank, " and ", in.shape.size());
      if (in.is_const()) {
        parts.push_back({in.shape[axis], n.key_of(i)});
      } else {
        parts.push_back({in.shape[axis], ""});
        out.inputs.push_back(in.node);
      }
    }
    out.op = std::make_shared<ConcatOp>(axis, parts);
    return out;
  });
}

}  // namespace tessera::lirpa::detail
