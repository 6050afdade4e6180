// MaxPool: 2-D max pooling. IBP applies it to both bounds. Relaxation per window w:
// lower line y >= x_j with j the window's element of largest lower bound (max >= any
// element), upper line y <= max_{k in w} u_k (a constant). Both hold for every x in the box.

#include <ATen/ATen.h>

#include "lirpa/ops/op_util.h"
#include "lirpa/ops/pool_util.h"

namespace tessera::lirpa::detail {

class MaxPoolOp final : public BoundOp {
 public:
  MaxPoolOp(Window2d win, bool ceil_mode, std::vector<int64_t> in_shape)
      : win_(std::move(win)), ceil_(ceil_mode), in_(std::move(in_shape)) {}
  std::string type() const override { return "MaxPool"; }
  bool needs_input_bounds() const override { return true; }

  at::Tensor forward(const OpEnv&, const std::vector<at::Tensor>& x) const override {
    at::Tensor y = at::max_pool2d(merge_lead(x[0], 3), win_.kernel, win_.stride, win_.pad, win_.dilation, ceil_);
    return unmerge_pooled(y, x[0].size(0), in_);
  }
  Interval ibp(const OpEnv& env, const std::vector<Interval>& x) const override {
    return {forward(env, {x[0].lower}), forward(env, {x[0].upper})};  // monotone in every input
  }

  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext& ctx) const override {
    const Interval& in = ctx.input_bounds.at(0);
    at::Tensor l4 = merge_lead(in.lower.to(env.dtype), 3), u4 = merge_lead(in.upper.to(env.dtype), 3);
    auto [lmax, idx] = at::max_pool2d_with_indices(l4, win_.kernel, win_.stride, win_.pad, win_.dilation, ceil_);
    at::Tensor umax = at::max_pool2d(u4, win_.kernel, win_.stride, win_.pad, win_.dilation, ceil_);
    at::Tensor ad = a->dense(env.dtype);
    int64_t s = ad.size(0);
    at::Tensor a4 = merge_lead(ad, 3);                      // [S, C, H', W']
    at::Tensor pos = a4.clamp_min(0), neg = a4.clamp_max(0);
    at::Tensor idx_s = per_row(idx, s).contiguous();        // the argmax of each row's group
    umax = per_row(umax, s);
    at::Tensor like = at::zeros({s, l4.size(1), l4.size(2), l4.size(3)}, a4.options());
    // A+ on x_j (scatter to the argmax of the lower bounds); A- on the constant max u
    at::Tensor ax = at::max_pool2d_with_indices_backward(pos, like, win_.kernel, win_.stride, win_.pad,
                                                         win_.dilation, ceil_, idx_s);
    at::Tensor bias = (neg * umax).reshape({s, -1}).sum(1);
    return {{DenseA::make(ax.reshape(with_lead(s, in_)))}, bias};
  }

 private:
  Window2d win_;
  bool ceil_;
  std::vector<int64_t> in_;
};

void register_max_pool(OpRegistry& r) {
  r.add("MaxPool", [](const OnnxNode& n) -> BuiltOp {
    TESSERA_CHECK(n.inputs.at(0).shape.size() >= 3, Unsupported, "MaxPool node '", n.name, "': 2-D only");
    TESSERA_CHECK(n.attr_int("storage_order", 0) == 0, Unsupported, "MaxPool node '", n.name,
                  "': storage_order is not supported");
    return {std::make_shared<MaxPoolOp>(read_window(n, {}), n.attr_int("ceil_mode", 0) != 0, n.inputs[0].shape),
            {n.inputs[0].node}};
  });
}

}  // namespace tessera::lirpa::detail
