// Linear: y = x W + b with a constant W [k, n] (ONNX Gemm, and MatMul with a constant on
// the right). MatMul with the constant on the left is matmul_left.cpp.

#include <ATen/ATen.h>

#include "lirpa/ops/op_util.h"
#include "lirpa/ops/registry.h"
#include "tessera/core/error.h"

namespace tessera::lirpa::detail {

std::shared_ptr<const BoundOp> make_matmul_left(std::string w_key, bool vector_input);

class LinearOp final : public BoundOp {
 public:
  LinearOp(std::string w, std::string b) : w_(std::move(w)), b_(std::move(b)) {}
  std::string type() const override { return "Linear"; }

  at::Tensor forward(const OpEnv& env, const std::vector<at::Tensor>& x) const override {
    at::Tensor y = at::matmul(x[0], env.params.get(w_, env.dtype));  // y = x W
    if (!b_.empty()) y = y + env.params.get(b_, env.dtype);          // + b
    return y;
  }

  Interval ibp(const OpEnv& env, const std::vector<Interval>& x) const override {
    at::Tensor w = env.params.get(w_, env.dtype);
    at::Tensor yc = at::matmul(center(x[0]), w);     // W c
    at::Tensor yr = at::matmul(radius(x[0]), w.abs());  // |W| r
    if (!b_.empty()) yc = yc + env.params.get(b_, env.dtype);
    return {yc - yr, yc + yr};
  }

  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext&) const override {
    at::Tensor w = env.params.get(w_, env.dtype);
    at::Tensor ax = at::matmul(a->dense(env.dtype), w.t());  // A_x = A_y W^T
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
  TESSERA_CHECK(n.inputs.size() == 2 && n.variable_count() == 1, Unsupported, "MatMul node '", n.name,
                "': exactly one operand must be a constant");
  if (n.inputs[1].is_const()) {
    TESSERA_CHECK(n.inputs[1].value.dim() == 2, Unsupported, "MatMul node '", n.name,
                  "': the constant must be a matrix");
    return {std::make_shared<LinearOp>(n.inputs[1].key, ""), {n.inputs[0].node}};
  }
  TESSERA_CHECK(n.inputs[0].value.dim() == 2, Unsupported, "MatMul node '", n.name,
                "': the constant must be a matrix");
  bool vector_input = n.inputs[1].shape.size() == 1;
  return {make_matmul_left(n.inputs[0].key, vector_input), {n.inputs[1].node}};
}

}  // namespace

void register_linear(OpRegistry& r) {
  r.add("Gemm", build_gemm);
  r.add("MatMul", build_matmul);
}

}  // namespace tessera::lirpa::detail
