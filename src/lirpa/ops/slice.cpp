// Slice: y = x[start_0:end_0:step_0, ...] along some axes (ONNX Slice; starts, ends, axes
// and steps as constant inputs from opset 10, as attributes before). A selection of
// entries: linear and exact in IBP and CROWN.

#include <ATen/ATen.h>

#include "lirpa/ops/index_ops.h"
#include "lirpa/ops/op_util.h"
#include "tessera/core/error.h"

namespace tessera::lirpa::detail {

namespace {

std::vector<int64_t> ints_of(const at::Tensor& t) {
  at::Tensor l = t.to(at::kLong).contiguous().reshape({-1});
  return {l.data_ptr<int64_t>(), l.data_ptr<int64_t>() + l.numel()};
}

/// Input `i` of a Slice node as integers; `role` names it in the error.
std::vector<int64_t> const_ints(const OnnxNode& n, size_t i, const char* role) {
  TESSERA_CHECK(i < n.inputs.size(), ParseError, "Slice node '", n.name, "': the ", role, " input is missing");
  TESSERA_CHECK(n.inputs[i].is_const(), Unsupported, "Slice node '", n.name, "': the ", role,
                " input must be a constant");
  return ints_of(n.inputs[i].value);
}

}  // namespace

std::vector<SliceRange> slice_ranges(const OnnxNode& n, const std::vector<int64_t>& shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (n.inputs.size() > 1) {  // opset >= 10: starts, ends[, axes[, steps]] are inputs
    starts = const_ints(n, 1, "starts");
    ends = const_ints(n, 2, "ends");
    if (n.inputs.size() > 3) axes = const_ints(n, 3, "axes");
    if (n.inputs.size() > 4) steps = const_ints(n, 4, "steps");
  } else {  // opset < 10: attributes
    TESSERA_CHECK(n.has("starts") && n.has("ends"), ParseError, "Slice node '", n.name,
                  "': needs starts and ends (inputs or attributes)");
    starts = n.attr_ints("starts", {});
    ends = n.attr_ints("ends", {});
    axes = n.attr_ints("axes", {});
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  TESSERA_CHECK(ends.size() == starts.size() && axes.size() == starts.size() && steps.size() == starts.size(),
                ParseError, "Slice node '", n.name, "': starts, ends, axes and steps differ in length (",
                starts.size(), ", ", ends.size(), ", ", axes.size(), ", ", steps.size(), ")");
  std::vector<SliceRange> out;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t ax = axes[i] < 0 ? axes[i] + rank : axes[i];
    TESSERA_CHECK(ax >= 0 && ax < rank, ParseError, "Slice node '", n.name, "': axis ", axes[i],
                  " is outside a tensor of rank ", rank);
    TESSERA_CHECK(steps[i] > 0, Unsupported, "Slice node '", n.name, "': step ", steps[i],
                  " (only positive steps are supported)");
    const int64_t len = shape[ax];
    // negative positions count from the end; both ends clamped to [0, len]
    auto clamp = [&](int64_t p) { return std::clamp<int64_t>(p < 0 ? p + len : p, 0, len); };
    const int64_t s = clamp(starts[i]), e = std::max(clamp(ends[i]), s);
    out.push_back({ax, s, e, steps[i]});
  }
  return out;
}

at::Tensor apply_slice(const at::Tensor& x, const std::vector<SliceRange>& ranges, int64_t lead) {
  at::Tensor y = x;
  for (const SliceRange& r : ranges) y = y.slice(r.axis + lead, r.start, r.end, r.step);
  return y;
}

class SliceOp final : public BoundOp {
 public:
  SliceOp(std::vector<SliceRange> ranges, std::vector<int64_t> in_shape)
      : ranges_(std::move(ranges)), in_shape_(std::move(in_shape)) {}
  std::string type() const override { return "Slice"; }
  at::Tensor forward(const OpEnv&, const std::vector<at::Tensor>& x) const override {
    return apply_slice(x[0], ranges_, 1).contiguous();
  }
  Interval ibp(const OpEnv& env, const std::vector<Interval>& x) const override {
    return {forward(env, {x[0].lower}), forward(env, {x[0].upper})};
  }
  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext&) const override {
    at::Tensor ay = a->dense(env.dtype);
    // A_x = A_y on the selected entries, 0 elsewhere
    at::Tensor ax = at::zeros(with_lead(ay.size(0), in_shape_), ay.options());
    apply_slice(ax, ranges_, 1).copy_(ay);
    return {{DenseA::make(ax)}, {}};
  }

 private:
  std::vector<SliceRange> ranges_;
  std::vector<int64_t> in_shape_;
};

std::shared_ptr<const BoundOp> make_slice(std::vector<SliceRange> ranges, std::vector<int64_t> in_shape) {
  return std::make_shared<SliceOp>(std::move(ranges), std::move(in_shape));
}

void register_slice(OpRegistry& r) {
  r.add("Slice", [](const OnnxNode& n) -> BuiltOp {
    const NodeInput& x = n.inputs.at(0);
    TESSERA_CHECK(!x.is_const(), Unsupported, "Slice node '", n.name, "': the data input must be the variable");
    return {std::make_shared<SliceOp>(slice_ranges(n, x.shape), x.shape), {x.node}};
  });
}

}  // namespace tessera::lirpa::detail
