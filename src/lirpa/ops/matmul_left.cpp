// MatMulLeft: y = W x with a constant W [n, k] on the left (ONNX MatMul(W, x)).
// A vector input x [k] gives y [n]; a matrix input x [..., k, m] gives [..., n, m].

#include <ATen/ATen.h>

#include "lirpa/ops/op_util.h"
#include "lirpa/ops/registry.h"

namespace tessera::lirpa::detail {

class MatMulLeftOp final : public BoundOp {
 public:
  MatMulLeftOp(std::string w, bool vector_input) : w_(std::move(w)), vector_(vector_input) {}
  std::string type() const override { return "MatMulLeft"; }

  at::Tensor forward(const OpEnv& env, const std::vector<at::Tensor>& x) const override {
    return apply(x[0], env.params.get(w_, env.dtype));
  }

  Interval ibp(const OpEnv& env, const std::vector<Interval>& x) const override {
    at::Tensor w = env.params.get(w_, env.dtype);
    at::Tensor yc = apply(center(x[0]), w), yr = apply(radius(x[0]), w.abs());  // W c, |W| r
    return {yc - yr, yc + yr};
  }

  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext&) const override {
    at::Tensor w = env.params.get(w_, env.dtype);
    at::Tensor ad = a->dense(env.dtype);
    // rows of A_y y = A_y W x: A_x = A_y W (vector x) or W^T A_y (matrix x)
    at::Tensor ax = vector_ ? at::matmul(ad, w) : at::matmul(w.t(), ad);
    return {{DenseA::make(ax)}, {}};
  }

 private:
  at::Tensor apply(const at::Tensor& x, const at::Tensor& w) const {
    return vector_ ? at::matmul(x, w.t()) : at::matmul(w, x);  // batched W x
  }
  std::string w_;
  bool vector_;
};

std::shared_ptr<const BoundOp> make_matmul_left(std::string w_key, bool vector_input) {
  return std::make_shared<MatMulLeftOp>(std::move(w_key), vector_input);
}

void register_matmul_left(OpRegistry&) {}  // reached through MatMul in linear.cpp

}  // namespace tessera::lirpa::detail
