// Relu: y = max(x, 0). Relaxation on [l, u] (CROWN): upper line through (l, 0) and (u, u),
// lower line y >= alpha x with alpha = 1 if u > -l else 0 (adaptive), or an optimised alpha.

#include <ATen/ATen.h>

#include "lirpa/ops/op_util.h"
#include "lirpa/ops/registry.h"

namespace tessera::lirpa::detail {

class ReluOp final : public BoundOp {
 public:
  std::string type() const override { return "Relu"; }
  bool needs_input_bounds() const override { return true; }
  bool has_alpha() const override { return true; }
  bool tight_bounds_only_across_zero() const override { return true; }

  at::Tensor forward(const OpEnv&, const std::vector<at::Tensor>& x) const override {
    return x[0].clamp_min(0);
  }

  Interval ibp(const OpEnv&, const std::vector<Interval>& x) const override {
    return {x[0].lower.clamp_min(0), x[0].upper.clamp_min(0)};  // monotone
  }

  at::Tensor initial_alpha(const Interval& in) const override {
    return (upper_slope(in) > 0.5).to(in.lower.scalar_type());  // 1 if u > -l else 0
  }

  // relu(z) >= s z >= s L(e) (s = the adaptive slope, >= 0); relu(z) <= d (z - l-) <= d U(e) - d l-
  std::optional<LinearForms> forward_forms(const OpEnv& env, const std::vector<LinearForms>& x,
                                           const std::vector<Interval>& input_bounds) const override {
    const Interval& in = input_bounds.at(0);
    at::Tensor l = in.lower.to(env.dtype).unsqueeze(1), u = in.upper.to(env.dtype).unsqueeze(1);  // [D, 1, *shape]
    at::Tensor d = upper_slope({l, u});
    LinearForms y{x[0].lower * (d > 0.5).to(env.dtype), x[0].upper * d};
    const int64_t n = y.upper.size(1) - 1;
    y.upper.select(1, n).sub_((l.clamp_max(0) * d).squeeze(1));
    return y;
  }

  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext& ctx) const override {
    const Interval& in = ctx.input_bounds.at(0);
    at::Tensor l = in.lower.to(env.dtype), u = in.upper.to(env.dtype);
    at::Tensor d = upper_slope({l, u});                   // d = u+ / (u+ - l-)
    at::Tensor upper_b = -l.clamp_max(0) * d;              // y <= d (x - l-)
    at::Tensor lower_d = (d > 0.5).to(env.dtype);          // adaptive slope
    if (ctx.alpha.defined()) {  // slopes per row: the bounds' row groups spread over the rows
      const int64_t rows = ctx.alpha.size(0);
      at::Tensor unstable = per_row((l < 0).logical_and(u > 0), rows);
      lower_d = at::where(unstable, ctx.alpha.clamp(0, 1), per_row(lower_d, rows));  // stable: exact slope
    }
    return relaxed_backward(a, {lower_d, at::Tensor(), d, upper_b}, env.dtype);  // lower line through 0
  }

 private:
  static at::Tensor upper_slope(const Interval& in) {
    at::Tensor lr = in.lower.clamp_max(0);
    at::Tensor ur = at::max(in.upper.clamp_min(0), lr + 1e-12);
    return ur / (ur - lr);  // 1 for l >= 0, 0 for u <= 0
  }
};

std::shared_ptr<const BoundOp> make_relu() { return std::make_shared<ReluOp>(); }

bool is_relu(const BoundOp& op) { return dynamic_cast<const ReluOp*>(&op) != nullptr; }

void register_relu(OpRegistry& r) {
  r.add("Relu", [](const OnnxNode& n) -> BuiltOp {
    return {std::make_shared<ReluOp>(), {n.inputs.at(0).node}};
  });
}

}  // namespace tessera::lirpa::detail
