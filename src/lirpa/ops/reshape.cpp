// Reshape: the same values in another shape (ONNX Reshape, Flatten, Squeeze, Unsqueeze).
// The output shape is resolved statically when the model is loaded.

#include <ATen/ATen.h>

#include "lirpa/ops/op_util.h"
#include "lirpa/ops/registry.h"
#include "tessera/core/error.h"

namespace tessera::lirpa::detail {

class ReshapeOp final : public BoundOp {
 public:
  ReshapeOp(std::vector<int64_t> in, std::vector<int64_t> out) : in_(std::move(in)), out_(std::move(out)) {}
  std::string type() const override { return "Reshape"; }
  at::Tensor forward(const OpEnv&, const std::vector<at::Tensor>& x) const override {
    return x[0].reshape(with_lead(x[0].size(0), out_));
  }
  Interval ibp(const OpEnv& env, const std::vector<Interval>& x) const override {
    return {forward(env, {x[0].lower}), forward(env, {x[0].upper})};
  }
  std::optional<LinearForms> forward_forms(const OpEnv&, const std::vector<LinearForms>& x,
                                           const std::vector<Interval>&) const override {
    std::vector<int64_t> s = with_lead(x[0].lower.size(1), out_);
    s.insert(s.begin(), x[0].lower.size(0));  // [D, n + 1, *out]
    return LinearForms{x[0].lower.reshape(s), x[0].upper.reshape(s)};
  }
  Backward backward(const OpEnv&, const APtr& a, const BackwardContext&) const override {
    return {{a->reshaped(in_)}, {}};
  }

 private:
  std::vector<int64_t> in_, out_;
};

std::shared_ptr<const BoundOp> make_reshape(std::vector<int64_t> in, std::vector<int64_t> out) {
  return std::make_shared<ReshapeOp>(std::move(in), std::move(out));
}

namespace {

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

BuiltOp finish(const OnnxNode& n, std::vector<int64_t> out) {
  const NodeInput& x = n.inputs.at(0);
  TESSERA_CHECK(!x.is_const(), InvalidInput, n.op_type, " node '", n.name, "': constant data should have been folded");
  TESSERA_CHECK(numel(out) == numel(x.shape), DimensionMismatch, n.op_type, " node '", n.name,
                "': cannot reshape ", numel(x.shape), " values into ", numel(out));
  return {make_reshape(x.shape, out), {x.node}};
}

BuiltOp build_reshape(const OnnxNode& n) {
  TESSERA_CHECK(n.inputs.size() == 2 && n.inputs[1].is_const(), Unsupported, "Reshape node '", n.name,
                "': the shape must be a constant (after folding)");
  at::Tensor s = n.inputs[1].value.to(at::kLong).contiguous();
  std::vector<int64_t> out(s.data_ptr<int64_t>(), s.data_ptr<int64_t>() + s.numel());
  const auto& in = n.inputs[0].shape;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && n.attr_int("allowzero", 0) == 0) out[i] = in.at(i);  // 0 copies the input dim
    if (out[i] == -1) infer = static_cast<int64_t>(i); else known *= out[i];
  }
  if (infer >= 0) out[infer] = known == 0 ? 0 : numel(in) / known;
  return finish(n, out);
}

BuiltOp build_flatten(const OnnxNode& n) {
  const auto& in = n.inputs.at(0).shape;
  int64_t axis = n.attr_int("axis", 1);
  if (axis < 0) axis += static_cast<int64_t>(in.size());
  std::vector<int64_t> head(in.begin(), in.begin() + axis), tail(in.begin() + axis, in.end());
  return finish(n, {numel(head), numel(tail)});
}

std::vector<int64_t> axes_of(const OnnxNode& n, int64_t rank) {
  std::vector<int64_t> axes = n.attr_ints("axes", {});
  if (n.inputs.size() > 1 && n.inputs[1].is_const()) {
    at::Tensor a = n.inputs[1].value.to(at::kLong).contiguous();
    axes.assign(a.data_ptr<int64_t>(), a.data_ptr<int64_t>() + a.numel());
  }
  for (auto& a : axes) a = a < 0 ? a + rank : a;
  return axes;
}

BuiltOp build_squeeze(const OnnxNode& n) {
  const auto& in = n.inputs.at(0).shape;
  auto axes = axes_of(n, static_cast<int64_t>(in.size()));
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i) {
    bool listed = std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end();
    if (!(in[i] == 1 && (axes.empty() || listed))) out.push_back(in[i]);
  }
  return finish(n, out);
}

BuiltOp build_unsqueeze(const OnnxNode& n) {
  const auto& in = n.inputs.at(0).shape;
  int64_t rank = static_cast<int64_t>(in.size());
  auto axes = axes_of(n, rank + static_cast<int64_t>(n.attr_ints("axes", {}).size() +
                                                     (n.inputs.size() > 1 ? n.inputs[1].value.numel() : 0)));
  std::sort(axes.begin(), axes.end());
  std::vector<int64_t> out = in;
  for (int64_t a : axes) out.insert(out.begin() + a, 1);
  return finish(n, out);
}

}  // namespace

void register_reshape(OpRegistry& r) {
  r.add("Reshape", build_reshape);
  r.add("Flatten", build_flatten);
  r.add("Squeeze", build_squeeze);
  r.add("Unsqueeze", build_unsqueeze);
}

}  // namespace tessera::lirpa::detail
