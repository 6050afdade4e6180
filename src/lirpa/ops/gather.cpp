// Gather: y = x[..., idx, ...] along one axis with constant indices (ONNX Gather of an
// activation, e.g. the class token of a transformer). Linear and exact in IBP and CROWN.

#include <ATen/ATen.h>

#include "lirpa/ops/index_ops.h"
#include "lirpa/ops/op_util.h"
#include "tessera/core/error.h"

namespace tessera::lirpa::detail {

at::Tensor apply_gather(const at::Tensor& x, int64_t axis, const at::Tensor& indices, int64_t lead) {
  const int64_t ax = axis + lead, len = x.size(ax);
  at::Tensor idx = indices.to(at::kLong);
  idx = at::where(idx < 0, idx + len, idx);  // -1 is the last entry
  auto s = x.sizes().vec();
  std::vector<int64_t> out(s.begin(), s.begin() + ax);
  for (int64_t d : idx.sizes()) out.push_back(d);
  out.insert(out.end(), s.begin() + ax + 1, s.end());
  return at::index_select(x, ax, idx.reshape({-1})).reshape(out);
}

class GatherOp final : public BoundOp {
 public:
  GatherOp(int64_t axis, at::Tensor indices, std::vector<int64_t> in_shape)
      : axis_(axis), indices_(std::move(indices)), in_shape_(std::move(in_shape)) {}
  std::string type() const override { return "Gather"; }
  at::Tensor forward(const OpEnv&, const std::vector<at::Tensor>& x) const override {
    return apply_gather(x[0], axis_, indices_, 1);
  }
  Interval ibp(const OpEnv& env, const std::vector<Interval>& x) const override {
    return {forward(env, {x[0].lower}), forward(env, {x[0].upper})};
  }
  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext&) const override {
    at::Tensor ay = a->dense(env.dtype);
    const int64_t rows = ay.size(0), len = in_shape_[axis_];
    at::Tensor idx = indices_.reshape({-1});
    idx = at::where(idx < 0, idx + len, idx);
    // A_y as [S, before, k, after]; A_x[:, :, idx_j, :] += A_y[:, :, j, :] (repeats add up)
    std::vector<int64_t> flat{rows, 1, idx.numel(), 1};
    for (int64_t i = 0; i < axis_; ++i) flat[1] *= in_shape_[i];
    for (size_t i = axis_ + 1; i < in_shape_.size(); ++i) flat[3] *= in_shape_[i];
    at::Tensor ax = at::zeros({rows, flat[1], len, flat[3]}, ay.options());
    ax.index_add_(2, idx, ay.reshape(flat));
    return {{DenseA::make(ax.reshape(with_lead(rows, in_shape_)))}, {}};
  }

 private:
  int64_t axis_;
  at::Tensor indices_;  // int64, any shape
  std::vector<int64_t> in_shape_;
};

void register_gather(OpRegistry& r) {
  r.add("Gather", [](const OnnxNode& n) -> BuiltOp {
    TESSERA_CHECK(n.inputs.size() == 2, ParseError, "Gather node '", n.name, "' needs data and indices inputs");
    const NodeInput& x = n.inputs[0];
    TESSERA_CHECK(!x.is_const() && n.inputs[1].is_const(), Unsupported, "Gather node '", n.name,
                  "': the indices must be a constant and the data the variable");
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    int64_t axis = n.attr_int("axis", 0);
    if (axis < 0) axis += rank;
    TESSERA_CHECK(axis >= 0 && axis < rank, ParseError, "Gather node '", n.name, "': axis ", n.attr_int("axis", 0),
                  " is outside a tensor of rank ", rank);
    at::Tensor idx = n.inputs[1].value.to(at::kLong).contiguous();
    const int64_t len = x.shape[axis];
    TESSERA_CHECK(idx.numel() == 0 || (idx.min().item<int64_t>() >= -len && idx.max().item<int64_t>() < len),
                  ParseError, "Gather node '", n.name, "': an index is outside [", -len, ", ", len, ")");
    return {std::make_shared<GatherOp>(axis, idx, x.shape), {x.node}};
  });
}

}  // namespace tessera::lirpa::detail
