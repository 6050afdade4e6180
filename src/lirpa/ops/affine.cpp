// Affine: y = x * scale + shift with constant, broadcastable scale and shift (ONNX Add,
// Sub, Mul, Div with one constant operand, Neg, and BatchNormalization in inference mode).

#include <ATen/ATen.h>

#include "lirpa/ops/bilinear.h"
#include "lirpa/ops/composite.h"
#include "lirpa/ops/op_util.h"
#include "lirpa/ops/registry.h"
#include "tessera/core/error.h"

namespace tessera::lirpa::detail {

class AffineOp final : public BoundOp {
 public:
  AffineOp(std::string scale, std::string shift, std::vector<int64_t> in_shape)
      : scale_(std::move(scale)), shift_(std::move(shift)), in_shape_(std::move(in_shape)) {}
  std::string type() const override { return "Affine"; }

  at::Tensor forward(const OpEnv& env, const std::vector<at::Tensor>& x) const override {
    at::Tensor y = x[0];
    if (!scale_.empty()) y = y * env.params.get(scale_, env.dtype);  // x * s
    if (!shift_.empty()) y = y + env.params.get(shift_, env.dtype);  // + t
    return y;
  }

  Interval ibp(const OpEnv& env, const std::vector<Interval>& x) const override {
    // from the ends, each rounded once: [min(s l, s u) + t, max(s l, s u) + t]. (The centre
    // and radius form c +- r loses a small t beside a wide interval: LayerNorm's
    // variance + eps came out with lower end 0 instead of eps.)
    at::Tensor lo = x[0].lower, up = x[0].upper;
    if (!scale_.empty()) {
      at::Tensor s = env.params.get(scale_, env.dtype);
      at::Tensor sl = lo * s, su = up * s;
      lo = at::minimum(sl, su);
      up = at::maximum(sl, su);
    }
    if (!shift_.empty()) {
      at::Tensor t = env.params.get(shift_, env.dtype);
      lo = lo + t;
      up = up + t;
    }
    return {lo, up};
  }

  // lower = L s+ + U s-, upper = U s+ + L s-, + t on the constant row
  std::optional<LinearForms> forward_forms(const OpEnv& env, const std::vector<LinearForms>& x,
                                           const std::vector<Interval>&) const override {
    LinearForms y = x[0];
    if (!scale_.empty()) {
      at::Tensor s = env.params.get(scale_, env.dtype), p = s.clamp_min(0), m = s.clamp_max(0);
      y = {x[0].lower * p + x[0].upper * m, x[0].upper * p + x[0].lower * m};
    }
    if (!shift_.empty()) {
      at::Tensor t = env.params.get(shift_, env.dtype);
      const int64_t n = y.lower.size(1) - 1;
      y.lower = y.lower.clone(), y.upper = y.upper.clone();
      y.lower.select(1, n).add_(t), y.upper.select(1, n).add_(t);
    }
    return y;
  }

  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext&) const override {
    at::Tensor bias = shift_.empty() ? at::Tensor() : a->contract(env.params.get(shift_, env.dtype));
    if (scale_.empty() && a->node_shape() == in_shape_) return {{a}, bias};
    if (a->node_shape() == in_shape_) {  // no broadcast: A_x = A_y diag(s), in the rows' own form
      at::Tensor s = env.params.get(scale_, env.dtype);
      return {{a->relax({s, {}, s, {}}, env.dtype).a}, bias};
    }
    at::Tensor ad = a->dense(env.dtype);
    if (!scale_.empty()) ad = ad * env.params.get(scale_, env.dtype);  // A_x = A_y diag(s)
    return {{DenseA::make(sum_to_rows(ad, in_shape_))}, bias};
  }

 private:
  std::string scale_, shift_;
  std::vector<int64_t> in_shape_;
};

std::shared_ptr<const BoundOp> make_affine(std::string scale, std::string shift,
                                           std::vector<int64_t> in_shape) {
  return std::make_shared<AffineOp>(std::move(scale), std::move(shift), std::move(in_shape));
}

namespace {

const NodeInput& variable(const OnnxNode& n) {
  for (const auto& in : n.inputs)
    if (!in.is_const()) return in;
  TESSERA_THROW(InvalidInput, "node '", n.name, "' has no variable input");
}

BuiltOp build_mul_div(const OnnxNode& n) {
  TESSERA_CHECK(n.inputs.size() == 2, ParseError, n.op_type, " node '", n.name, "' needs two inputs");
  if (n.op_type == "Mul" && n.variable_count() == 2) return build_bilinear_mul(n);
  if (n.op_type == "Div" && !n.inputs[1].is_const()) return build_variable_div(n);  // x * (1 / y)
  TESSERA_CHECK(n.variable_count() == 1, Unsupported, n.op_type, " node '",
                n.name, "': only multiplication or division by a constant is supported");
  const NodeInput& x = variable(n);
  at::Tensor c = (x.node == n.inputs[0].node ? n.inputs[1] : n.inputs[0]).value.to(at::kDouble);
  if (n.op_type == "Div") c = 1.0 / c;  // x / c = x * (1/c)
  return {make_affine(n.put("scale", c), "", x.shape), {x.node}};
}

BuiltOp build_neg(const OnnxNode& n) {
  const NodeInput& x = variable(n);
  return {make_affine(n.put("scale", at::full({}, -1.0, at::kDouble)), "", x.shape), {x.node}};
}

BuiltOp build_batch_norm(const OnnxNode& n) {
  TESSERA_CHECK(n.inputs.size() == 5 && n.variable_count() == 1 && !n.inputs[0].is_const(), Unsupported,
                "BatchNormalization node '", n.name, "': scale, bias, mean and var must be constants");
  const NodeInput& x = n.inputs[0];
  TESSERA_CHECK(x.shape.size() >= 2, Unsupported, "BatchNormalization node '", n.name, "': needs [N, C, ...] input");
  double eps = n.attr_float("epsilon", 1e-5);
  auto v = [&](int i) { return n.inputs[i].value.to(at::kDouble); };
  at::Tensor s = v(1) / at::sqrt(v(4) + eps);  // s = gamma / sqrt(var + eps)
  at::Tensor t = v(2) - v(3) * s;              // t = beta - mean s
  std::vector<int64_t> view{-1};
  for (size_t i = 2; i < x.shape.size(); ++i) view.push_back(1);  // channel axis 1 of [N, C, ...]
  return {make_affine(n.put("scale", s.reshape(view)), n.put("shift", t.reshape(view)), x.shape), {x.node}};
}

}  // namespace

void register_affine(OpRegistry& r) {
  r.add("Mul", build_mul_div);
  r.add("Div", build_mul_div);
  r.add("Neg", build_neg);
  r.add("BatchNormalization", build_batch_norm);
}

}  // namespace tessera::lirpa::detail
