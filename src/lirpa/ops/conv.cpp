// Conv: 2-D convolution y = W * x + b (stride, padding, dilation, groups). Its backward is
// the transposed convolution of the A rows: A_x = W^T * A_y.

#include <ATen/ATen.h>

#include "lirpa/ops/op_util.h"
#include "lirpa/ops/pool_util.h"

namespace tessera::lirpa::detail {

class ConvOp final : public BoundOp {
 public:
  ConvOp(std::string w, std::string b, Window2d win, int64_t groups, std::vector<int64_t> in_shape)
      : w_(std::move(w)), b_(std::move(b)), win_(std::move(win)), groups_(groups), in_(std::move(in_shape)) {}
  std::string type() const override { return "Conv"; }
  ConvParams params() const { return {w_, b_, Conv2dGeometry{win_.stride, win_.pad, win_.dilation, groups_}, in_}; }

  at::Tensor forward(const OpEnv& env, const std::vector<at::Tensor>& x) const override {
    at::Tensor b = b_.empty() ? at::Tensor() : env.params.get(b_, env.dtype);
    return conv(x[0], env.params.get(w_, env.dtype), b);
  }

  Interval ibp(const OpEnv& env, const std::vector<Interval>& x) const override {
    at::Tensor w = env.params.get(w_, env.dtype);
    at::Tensor b = b_.empty() ? at::Tensor() : env.params.get(b_, env.dtype);
    at::Tensor yc = conv(center(x[0]), w, b), yr = conv(radius(x[0]), w.abs(), {});  // W*c + b, |W|*r
    return {yc - yr, yc + yr};
  }

  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext&) const override {
    Conv2dGeometry geo{win_.stride, win_.pad, win_.dilation, groups_};
    APtr ax = a->through_conv(env.params.get(w_, env.dtype), geo, in_, env.dtype);  // A_x = W^T * A_y
    at::Tensor bias;
    if (!b_.empty()) bias = a->contract(env.params.get(b_, env.dtype).reshape({-1, 1, 1}));  // sum A_y b
    return {{ax}, bias};
  }

 private:
  at::Tensor conv(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) const {
    at::Tensor y = at::conv2d(merge_lead(x, 3), w, b, win_.stride, win_.pad, win_.dilation, groups_);
    std::vector<int64_t> s{x.size(0)};
    s.insert(s.end(), in_.begin(), in_.end() - 3);
    s.insert(s.end(), {y.size(1), y.size(2), y.size(3)});
    return y.reshape(s);
  }
  std::string w_, b_;
  Window2d win_;
  int64_t groups_;
  std::vector<int64_t> in_;
};

std::optional<ConvParams> conv_params(const BoundOp& op) {
  const auto* conv = dynamic_cast<const ConvOp*>(&op);
  if (conv == nullptr) return std::nullopt;
  return conv->params();
}

void register_conv(OpRegistry& r) {
  r.add("Conv", [](const OnnxNode& n) -> BuiltOp {
    TESSERA_CHECK(n.inputs.size() >= 2 && !n.inputs[0].is_const() && n.inputs[1].is_const() &&
                      (n.inputs.size() < 3 || n.inputs[2].is_const()),
                  Unsupported, "Conv node '", n.name, "': weights and bias must be constants");
    TESSERA_CHECK(n.inputs[1].value.dim() == 4 && n.inputs[0].shape.size() >= 3, Unsupported, "Conv node '",
                  n.name, "': only 2-D convolutions are supported");
    auto w = n.inputs[1].value;
    Window2d win = read_window(n, {w.size(2), w.size(3)});
    std::string bias = n.inputs.size() >= 3 ? n.key_of(2) : "";
    return {std::make_shared<ConvOp>(n.key_of(1), bias, win, n.attr_int("group", 1), n.inputs[0].shape),
            {n.inputs[0].node}};
  });
}

}  // namespace tessera::lirpa::detail
