// AveragePool: 2-D average pooling, a linear map with non-negative weights, so IBP applies
// it to both bounds and the backward step is its adjoint (avg_pool2d_backward).

#include <ATen/ATen.h>

#include "lirpa/ops/op_util.h"
#include "lirpa/ops/pool_util.h"

namespace tessera::lirpa::detail {

class AvgPoolOp final : public BoundOp {
 public:
  AvgPoolOp(Window2d win, bool ceil_mode, bool count_pad, std::vector<int64_t> in_shape)
      : win_(std::move(win)), ceil_(ceil_mode), count_pad_(count_pad), in_(std::move(in_shape)) {}
  std::string type() const override { return "AveragePool"; }

  at::Tensor forward(const OpEnv&, const std::vector<at::Tensor>& x) const override {
    at::Tensor y = at::avg_pool2d(merge_lead(x[0], 3), win_.kernel, win_.stride, win_.pad, ceil_, count_pad_);
    return unmerge_pooled(y, x[0].size(0), in_);
  }
  Interval ibp(const OpEnv& env, const std::vector<Interval>& x) const override {
    return {forward(env, {x[0].lower}), forward(env, {x[0].upper})};
  }
  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext&) const override {
    at::Tensor ad = a->dense(env.dtype);
    at::Tensor a4 = merge_lead(ad, 3);
    at::Tensor like = at::zeros({a4.size(0), in_[in_.size() - 3], in_[in_.size() - 2], in_[in_.size() - 1]},
                                a4.options());
    // A_x = P^T A_y
    at::Tensor ax = at::avg_pool2d_backward(a4, like, win_.kernel, win_.stride, win_.pad, ceil_, count_pad_, c10::nullopt);
    return {{DenseA::make(ax.reshape(with_lead(ad.size(0), in_)))}, {}};
  }

 private:
  Window2d win_;
  bool ceil_, count_pad_;
  std::vector<int64_t> in_;
};

void register_avg_pool(OpRegistry& r) {
  r.add("AveragePool", [](const OnnxNode& n) -> BuiltOp {
    TESSERA_CHECK(n.inputs.at(0).shape.size() >= 3, Unsupported, "AveragePool node '", n.name, "': 2-D only");
    Window2d win = read_window(n, {});
    TESSERA_CHECK(win.dilation == std::vector<int64_t>({1, 1}), Unsupported, "AveragePool node '", n.name,
                  "': dilation is not supported");
    return {std::make_shared<AvgPoolOp>(win, n.attr_int("ceil_mode", 0) != 0, n.attr_int("count_include_pad", 0) != 0,
                                        n.inputs[0].shape),
            {n.inputs[0].node}};
  });
}

}  // namespace tessera::lirpa::detail
