#pragma once
// Bound operator for S-shaped activations (sigmoid, tanh): monotone, convex for x < 0 and
// concave for x > 0, derivative largest at 0.

#include "lirpa/ops/op_util.h"

namespace tessera::lirpa::detail {

class SCurveOp : public BoundOp {
 public:
  bool needs_input_bounds() const override { return true; }
  bool monotone() const override { return true; }
  at::Tensor forward(const OpEnv&, const std::vector<at::Tensor>& x) const override { return f(x[0]); }
  Interval ibp(const OpEnv&, const std::vector<Interval>& x) const override {
    return {f(x[0].lower), f(x[0].upper)};  // monotone increasing
  }
  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext& ctx) const override;
  /// The relaxation lines on [l, u] (public for tests).
  Relaxation relax(const at::Tensor& l, const at::Tensor& u) const;

 protected:
  virtual at::Tensor f(const at::Tensor& x) const = 0;
  virtual at::Tensor df(const at::Tensor& x) const = 0;
};

}  // namespace tessera::lirpa::detail
