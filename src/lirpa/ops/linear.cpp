// Linear: y = x W + b with a constant W [k, n] (ONNX Gemm, and MatMul with a constant on
// the right). MatMul with the constant on the left is matmul_left.cpp. The products with W
// are the store's (param_store.h): in blocks of columns (forward, IBP) or rows (backward),
// or tensor-parallel.

#include <ATen/ATen.h>

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include "lirpa/ops/bilinear.h"
#include "lirpa/ops/op_util.h"
#include "lirpa/ops/registry.h"
#include "tessera/core/error.h"

namespace tessera::lirpa::detail {

std::shared_ptr<const BoundOp> make_matmul_left(std::string w_key, bool vector_input);

namespace {

using torch::autograd::Node;
using torch::autograd::variable_list;

/// True when `t` takes part in a differentiable computation (alpha-CROWN's slopes, PGD).
bool on_tape(const at::Tensor& t) { return at::GradMode::is_enabled() && t.requires_grad(); }

int64_t column_block_width(const OpEnv& env, const std::vector<int64_t>& shape) {
  return weight_block_width(shape[1], shape[0] * at::elementSize(env.dtype));
}

int64_t row_block_width(const OpEnv& env, const std::vector<int64_t>& shape) {
  return weight_block_width(shape[0], shape[1] * at::elementSize(env.dtype));
}

/// Backward of a blocked or tensor-parallel product with W: the store multiplies again
/// (FSDP gathers the layer again block by block; TP multiplies by its own block and
/// communicates), so the tape keeps no weight.
/// Of y = x W: dL/dx = (dL/dy) W^T; of y = x W^T: dL/dx = (dL/dy) W.
class WeightProductBackward final : public Node {
 public:
  WeightProductBackward(const ParamStore* store, std::string key, at::ScalarType dtype, bool transposed)
      : store_(store), key_(std::move(key)), dtype_(dtype), transposed_(transposed) {}
  std::string name() const override { return "tessera::WeightProductBackward"; }

  variable_list apply(variable_list&& grads) override {
    // every rank joins the gathers, also when its loss did not reach this product
    at::Tensor g = grads[0].defined() ? grads[0] : at::zeros(shape_, options_);
    if (transposed_) return {store_->times(key_, dtype_, {{g, false}})[0]};
    return {store_->times_transposed(key_, dtype_, g)};
  }

  std::vector<int64_t> shape_;
  at::TensorOptions options_;

 private:
  const ParamStore* store_;  ///< the graph's store: outlives the pass that records this node
  std::string key_;
  at::ScalarType dtype_;
  bool transposed_;
};

/// y = x W (or x W^T when `transposed`) by the store; on alpha-CROWN's or PGD's tape a
/// blocked or collective product is recorded with a backward that asks the store again. A
/// weight that fits one block of a local store is used whole, and autograd keeps it as usual.
at::Tensor weight_product(const OpEnv& env, const std::string& key, const at::Tensor& x, bool transposed) {
  const std::vector<int64_t> shape = env.params.shape(key);
  const bool one_block = !env.params.collective_products() &&
                         (transposed ? row_block_width(env, shape) >= shape[0]
                                     : column_block_width(env, shape) >= shape[1]);
  auto product = [&](const at::Tensor& v) {
    return transposed ? env.params.times_transposed(key, env.dtype, v) : env.params.times(key, env.dtype, {{v, false}})[0];
  };
  if (one_block || !on_tape(x)) return product(x);
  at::Tensor y = product(x.detach());
  std::shared_ptr<WeightProductBackward> node(new WeightProductBackward(&env.params, key, env.dtype, transposed),
                                              torch::autograd::deleteNode);
  node->shape_ = y.sizes().vec();
  node->options_ = y.options();
  node->set_next_edges(torch::autograd::collect_next_edges(x));
  torch::autograd::set_history(y, node);
  return y;
}

}  // namespace

class LinearOp final : public BoundOp {
 public:
  LinearOp(std::string w, std::string b) : w_(std::move(w)), b_(std::move(b)) {}
  std::string type() const override { return "Linear"; }

  at::Tensor forward(const OpEnv& env, const std::vector<at::Tensor>& x) const override {
    at::Tensor y = weight_product(env, w_, x[0], false);  // y = x W
    if (!b_.empty()) y = y + env.params.get(b_, env.dtype);  // + b
    return y;
  }

  Interval ibp(const OpEnv& env, const std::vector<Interval>& x) const override {
    at::Tensor c = center(x[0]), r = radius(x[0]);
    at::Tensor yc, yr;  // W c, |W| r
    if (on_tape(c) || on_tape(r)) {  // differentiable IBP: whole, autograd keeps W
      at::Tensor w = env.params.get(w_, env.dtype);
      yc = at::matmul(c, w), yr = at::matmul(r, w.abs());
    } else {
      auto y = env.params.times(w_, env.dtype, {{c, false}, {r, true}});
      yc = y[0], yr = y[1];
    }
    if (!b_.empty()) yc = yc + env.params.get(b_, env.dtype);
    return {yc - yr, yc + yr};
  }

  // lower = L W+ + U W- = M W - H |W|, upper = M W + H |W| (M = (L + U) / 2, H = (U - L) / 2:
  // an identity, whatever the signs of the forms' coefficients), + b on the constant row; in
  // blocks of W's columns like IBP, so a sharded store gathers one block at a time
  std::optional<LinearForms> forward_forms(const OpEnv& env, const std::vector<LinearForms>& x,
                                           const std::vector<Interval>&) const override {
    at::Tensor mid = (x[0].lower + x[0].upper) / 2, half = (x[0].upper - x[0].lower) / 2;
    auto y = env.params.times(w_, env.dtype, {{mid, false}, {half, true}});  // M W, H |W|
    LinearForms out{y[0] - y[1], y[0] + y[1]};
    if (!b_.empty()) {
      at::Tensor b = env.params.get(b_, env.dtype);
      const int64_t n = out.lower.size(1) - 1;
      out.lower.select(1, n).add_(b), out.upper.select(1, n).add_(b);
    }
    return out;
  }

  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext&) const override {
    at::Tensor ax = weight_product(env, w_, a->dense(env.dtype), true);  // A_x = A_y W^T
    at::Tensor bias = b_.empty() ? at::Tensor() : a->contract(env.params.get(b_, env.dtype));
    return {{DenseA::make(ax)}, bias};
  }

 private:
  std::string w_, b_;
};

std::shared_ptr<const BoundOp> make_linear(std::string w_key, std::string b_key) {
  return std::make_shared<LinearOp>(std::move(w_key), std::move(b_key));
}

namespace {

BuiltOp build_gemm(const OnnxNode& n) {
  TESSERA_CHECK(n.inputs.size() >= 2 && !n.inputs[0].is_const() && n.inputs[1].is_const() &&
                    (n.inputs.size() < 3 || n.inputs[2].is_const()),
                Unsupported, "Gemm node '", n.name, "': only a variable A with constant B and C is supported");
  TESSERA_CHECK(n.attr_int("transA", 0) == 0, Unsupported, "Gemm node '", n.name, "': transA=1 is not supported");
  at::Tensor b = n.inputs[1].value.to(at::kDouble);
  if (n.attr_int("transB", 0) != 0) b = b.t();
  at::Tensor w = (b * n.attr_float("alpha", 1.0)).contiguous();  // W = alpha B'
  std::string bias;
  if (n.inputs.size() >= 3) bias = n.put("bias", n.inputs[2].value.to(at::kDouble) * n.attr_float("beta", 1.0));
  return {std::make_shared<LinearOp>(n.put("weight", w), bias), {n.inputs[0].node}};
}

BuiltOp build_matmul(const OnnxNode& n) {
  TESSERA_CHECK(n.inputs.size() == 2, ParseError, "MatMul node '", n.name, "' needs two inputs");
  if (n.variable_count() == 2) return build_bilinear_matmul(n);
  if (n.inputs[1].is_const()) {
    TESSERA_CHECK(n.inputs[1].value.dim() == 2, Unsupported, "MatMul node '", n.name,
                  "': the constant must be a matrix");
    return {std::make_shared<LinearOp>(n.key_of(1), ""), {n.inputs[0].node}};
  }
  TESSERA_CHECK(n.inputs[0].value.dim() == 2, Unsupported, "MatMul node '", n.name,
                "': the constant must be a matrix");
  bool vector_input = n.inputs[1].shape.size() == 1;
  return {make_matmul_left(n.key_of(0), vector_input), {n.inputs[1].node}};
}

}  // namespace

void register_linear(OpRegistry& r) {
  r.add("Gemm", build_gemm);
  r.add("MatMul", build_matmul);
}

}  // namespace tessera::lirpa::detail
