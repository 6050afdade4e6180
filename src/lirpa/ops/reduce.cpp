// ReduceSum and ReduceMean: y = s * sum of x over `axes` (s = 1, or 1 / (number of summed
// entries) for the mean), linear with s > 0, so exact in every method:
// - IBP: [s sum(l), s sum(u)] (a positive combination of independent entries is tightest
//   at the ends of each);
// - CROWN: A_x[..., i, ...] = s A_y[..., reduced i, ...] (every summed entry takes the row's
//   coefficient of its sum), no bias.
// ONNX attributes: keepdims (default 1); the axes as the second input (ReduceSum from opset
// 13, ReduceMean from 18) or as the `axes` attribute (earlier opsets); no axes reduce all
// axes unless noop_with_empty_axes = 1 (then y = x).

#include <ATen/ATen.h>

#include <algorithm>

#include "lirpa/ops/op_util.h"
#include "lirpa/ops/registry.h"
#include "tessera/core/error.h"

namespace tessera::lirpa::detail {

class ReduceOp final : public BoundOp {
 public:
  /// `axes`: sorted, non-negative axes of the node shape (not empty).
  ReduceOp(bool mean, std::vector<int64_t> axes, bool keepdims, std::vector<int64_t> in_shape)
      : mean_(mean), axes_(std::move(axes)), keepdims_(keepdims), in_shape_(std::move(in_shape)) {
    int64_t count = 1;
    for (int64_t ax : axes_) count *= in_shape_.at(ax);
    scale_ = mean_ ? 1.0 / static_cast<double>(count) : 1.0;
  }
  std::string type() const override { return mean_ ? "ReduceMean" : "ReduceSum"; }

  at::Tensor forward(const OpEnv&, const std::vector<at::Tensor>& x) const override {
    at::Tensor y = x[0].sum(batched_axes(), keepdims_);  // sum over the axes
    return mean_ ? y * scale_ : y;
  }

  Interval ibp(const OpEnv& env, const std::vector<Interval>& x) const override {
    return {forward(env, {x[0].lower}), forward(env, {x[0].upper})};  // monotone: s > 0
  }

  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext&) const override {
    at::Tensor ad = a->dense(env.dtype);  // [S, *out_shape]
    if (!keepdims_)
      for (int64_t ax : axes_) ad = ad.unsqueeze(ax + 1);  // ascending: each lands at its own axis
    ad = ad.expand(with_lead(ad.size(0), in_shape_));     // A_x = s A_y broadcast over the summed axes
    return {{DenseA::make((mean_ ? ad * scale_ : ad).contiguous())}, {}};
  }

 private:
  std::vector<int64_t> batched_axes() const {
    std::vector<int64_t> out;
    for (int64_t ax : axes_) out.push_back(ax + 1);  // the leading batch dimension
    return out;
  }
  bool mean_;
  std::vector<int64_t> axes_;
  bool keepdims_;
  std::vector<int64_t> in_shape_;
  double scale_ = 1.0;
};

namespace {

BuiltOp build_reduce(const OnnxNode& n) {
  TESSERA_CHECK(!n.inputs.empty() && !n.inputs[0].is_const(), Unsupported, n.op_type, " node '", n.name,
                "': the reduced tensor must be a variable");
  const NodeInput& x = n.inputs[0];
  std::vector<int64_t> axes = n.attr_ints("axes", {});
  if (n.inputs.size() > 1) {
    TESSERA_CHECK(n.inputs[1].is_const(), Unsupported, n.op_type, " node '", n.name, "': axes must be a constant");
    at::Tensor t = n.inputs[1].value.to(at::kLong).reshape({-1}).contiguous();
    axes.assign(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel());
  }
  const auto rank = static_cast<int64_t>(x.shape.size());
  if (axes.empty()) {
    if (n.attr_int("noop_with_empty_axes", 0) != 0) return {make_affine("", "", x.shape), {x.node}};  // y = x
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  for (int64_t& ax : axes) {
    TESSERA_CHECK(ax >= -rank && ax < rank, InvalidInput, n.op_type, " node '", n.name, "': axis ", ax,
                  " out of range for rank ", rank);
    if (ax < 0) ax += rank;
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  bool keepdims = n.attr_int("keepdims", 1) != 0;
  return {std::make_shared<ReduceOp>(n.op_type == "ReduceMean", axes, keepdims, x.shape), {x.node}};
}

}  // namespace

void register_reduce(OpRegistry& r) {
  r.add("ReduceSum", build_reduce);
  r.add("ReduceMean", build_reduce);
}

}  // namespace tessera::lirpa::detail
