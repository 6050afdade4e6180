// Add: y = a + sign * b for two variable operands (residual connections); with one constant
// operand ONNX Add/Sub become an Affine operator.

#include <ATen/ATen.h>

#include "lirpa/ops/op_util.h"
#include "lirpa/ops/registry.h"
#include "tessera/core/error.h"

namespace tessera::lirpa::detail {

std::shared_ptr<const BoundOp> make_affine(std::string scale, std::string shift, std::vector<int64_t> in_shape);

class AddOp final : public BoundOp {
 public:
  AddOp(double sign, std::vector<int64_t> a_shape, std::vector<int64_t> b_shape)
      : sign_(sign), a_shape_(std::move(a_shape)), b_shape_(std::move(b_shape)) {}
  std::string type() const override { return sign_ > 0 ? "Add" : "Sub"; }

  at::Tensor forward(const OpEnv&, const std::vector<at::Tensor>& x) const override {
    return x[0] + sign_ * x[1];
  }

  Interval ibp(const OpEnv&, const std::vector<Interval>& x) const override {
    // a + b in [la + lb, ua + ub]; a - b in [la - ub, ua - lb]
    if (sign_ > 0) return {x[0].lower + x[1].lower, x[0].upper + x[1].upper};
    return {x[0].lower - x[1].upper, x[0].upper - x[1].lower};
  }

  std::optional<LinearForms> forward_forms(const OpEnv&, const std::vector<LinearForms>& x,
                                           const std::vector<Interval>&) const override {
    if (sign_ > 0) return LinearForms{x[0].lower + x[1].lower, x[0].upper + x[1].upper};
    return LinearForms{x[0].lower - x[1].upper, x[0].upper - x[1].lower};  // a - b
  }

  Backward backward(const OpEnv& env, const APtr& a, const BackwardContext&) const override {
    // y = a + b without broadcasting: both operands take the rows as they are (patches stay patches)
    if (sign_ > 0 && a->node_shape() == a_shape_ && b_shape_ == a_shape_) return {{a, a}, {}};
    at::Tensor ad = a->dense(env.dtype);
    APtr aa = a->node_shape() == a_shape_ ? a : DenseA::make(sum_to_rows(ad, a_shape_));  // A_a = A_y
    APtr ab = DenseA::make(sum_to_rows(sign_ * ad, b_shape_));                            // A_b = sign A_y
    return {{aa, ab}, {}};
  }

 private:
  double sign_;
  std::vector<int64_t> a_shape_, b_shape_;
};

namespace {

BuiltOp build_add_sub(const OnnxNode& n) {
  TESSERA_CHECK(n.inputs.size() == 2, InvalidInput, n.op_type, " node '", n.name, "' needs two inputs");
  double sign = n.op_type == "Sub" ? -1.0 : 1.0;
  const NodeInput& a = n.inputs[0];
  const NodeInput& b = n.inputs[1];
  if (!a.is_const() && !b.is_const()) return {std::make_shared<AddOp>(sign, a.shape, b.shape), {a.node, b.node}};
  if (!a.is_const()) {  // x + c, x - c
    return {make_affine("", n.put("shift", sign * b.value.to(at::kDouble)), a.shape), {a.node}};
  }
  // c + x, c - x = -x + c
  std::string scale = sign > 0 ? "" : n.put("scale", at::full({}, -1.0, at::kDouble));
  return {make_affine(scale, n.put("shift", a.value.to(at::kDouble)), b.shape), {b.node}};
}

}  // namespace

void register_add(OpRegistry& r) {
  r.add("Add", build_add_sub);
  r.add("Sub", build_add_sub);
}

}  // namespace tessera::lirpa::detail
