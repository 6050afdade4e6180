// Constant folding: nodes whose inputs are all constants (mostly shape arithmetic:
// Shape -> Gather -> Unsqueeze -> Concat -> Reshape) are evaluated when the model loads.

#include <ATen/ATen.h>

#include "lirpa/io/onnx_tensor.h"
#include "lirpa/ops/index_ops.h"
#include "tessera/core/error.h"
#include "tessera/core/memory_ledger.h"

namespace tessera::lirpa::detail {
namespace {

std::vector<int64_t> as_ints(const at::Tensor& t) {
  at::Tensor l = t.to(at::kLong).contiguous().reshape({-1});
  return {l.data_ptr<int64_t>(), l.data_ptr<int64_t>() + l.numel()};
}

int64_t norm_axis(int64_t a, int64_t rank) { return a < 0 ? a + rank : a; }

at::Tensor cast(const at::Tensor& x, int64_t to) {
  switch (to) {
    case onnx::TensorProto::FLOAT: return x.to(at::kFloat);
    case onnx::TensorProto::DOUBLE: return x.to(at::kDouble);
    case onnx::TensorProto::INT64: return x.to(at::kLong);
    case onnx::TensorProto::INT32: return x.to(at::kInt);
    case onnx::TensorProto::BOOL: return x.to(at::kBool);
    default: TESSERA_THROW(Unsupported, "Cast to ONNX type ", to, " is not supported");
  }
}

at::Tensor fold_reshape(const OnnxNode& n, const at::Tensor& x) {
  std::vector<int64_t> s = as_ints(n.inputs.at(1).value);
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] == 0 && n.attr_int("allowzero", 0) == 0) s[i] = x.size(static_cast<int64_t>(i));
  return x.reshape(s);
}

}  // namespace

at::Tensor fold_constant(const OnnxNode& n) {
  const std::string& op = n.op_type;
  auto in = [&](size_t i) {
    TESSERA_CHECK(i < n.inputs.size(), ParseError, op, " node '", n.name, "': input ", i, " is missing");
    return n.inputs[i].value;
  };
  if (op == "Identity" || op == "Dropout") return in(0);
  if (op == "Cast") return cast(in(0), n.attr_int("to", onnx::TensorProto::FLOAT));
  if (op == "Shape") return at::tensor(in(0).sizes().vec(), at::kLong);
  if (op == "Reshape") return fold_reshape(n, in(0));
  if (op == "Flatten") {
    int64_t ax = norm_axis(n.attr_int("axis", 1), in(0).dim());
    return in(0).reshape({ax == 0 ? 1 : in(0).flatten(0, ax - 1).size(0), -1});
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    std::vector<int64_t> axes = n.attr_ints("axes", {});
    if (n.inputs.size() > 1) axes = as_ints(in(1));
    at::Tensor y = in(0);
    if (op == "Squeeze") {
      if (axes.empty()) return y.squeeze();
      std::sort(axes.begin(), axes.end(), [&](int64_t a, int64_t b) { return norm_axis(a, y.dim()) > norm_axis(b, y.dim()); });
      int64_t rank = y.dim();
      for (int64_t a : axes) y = y.squeeze(norm_axis(a, rank));
      return y;
    }
    int64_t rank = y.dim() + static_cast<int64_t>(axes.size());
    for (auto& a : axes) a = norm_axis(a, rank);
    std::sort(axes.begin(), axes.end());
    for (int64_t a : axes) y = y.unsqueeze(a);
    return y;
  }
  if (op == "Concat") {
    std::vector<at::Tensor> parts;
    for (const auto& i : n.inputs) parts.push_back(i.value);
    return at::cat(parts, norm_axis(n.attr_int("axis", 0), parts.at(0).dim()));
  }
  if (op == "Gather") return apply_gather(in(0), norm_axis(n.attr_int("axis", 0), in(0).dim()), in(1), 0);
  if (op == "Expand") {  // numpy broadcast of x against the shape
    std::vector<int64_t> shape = as_ints(in(1));
    const at::Tensor x = in(0);
    std::vector<int64_t> xs(shape.size() > static_cast<size_t>(x.dim()) ? shape.size() - x.dim() : 0, 1);
    for (int64_t d : x.sizes()) xs.push_back(d);
    std::vector<int64_t> out(xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      const int64_t want = i + shape.size() >= xs.size() ? shape[i + shape.size() - xs.size()] : 1;
      TESSERA_CHECK(xs[i] == want || xs[i] == 1 || want == 1, ParseError, "Expand node '", n.name,
                    "': cannot broadcast dimension ", xs[i], " to ", want);
      out[i] = std::max(xs[i], want);
    }
    return x.reshape(xs).expand(out).contiguous();
  }
  if (op == "Add") return in(0) + in(1);
  if (op == "Sub") return in(0) - in(1);
  if (op == "Mul") return in(0) * in(1);
  if (op == "Div") {
    bool ints = !at::isFloatingType(in(0).scalar_type()) && !at::isFloatingType(in(1).scalar_type());
    return ints ? at::div(in(0), in(1), "floor") : in(0) / in(1);
  }
  if (op == "Neg") return -in(0);
  // torch.onnx.export writes `expand(batch, -1, -1)` as Where(Equal(shape, -1), 1, shape)
  if (op == "Equal") return at::eq(in(0), in(1));
  if (op == "Where") return at::where(in(0).to(at::kBool), in(1), in(2));
  if (op == "Relu") return in(0).clamp_min(0);
  if (op == "Pow") return at::pow(in(0), in(1));  // an attention scale head_dim^-0.5 from a shape
  if (op == "Sqrt") return at::sqrt(in(0));
  if (op == "MatMul") return at::matmul(in(0), in(1));
  if (op == "Transpose") {
    std::vector<int64_t> perm = n.attr_ints("perm", {});
    if (perm.empty()) for (int64_t i = in(0).dim() - 1; i >= 0; --i) perm.push_back(i);
    return in(0).permute(perm).contiguous();
  }
  if (op == "Slice") return apply_slice(in(0), slice_ranges(n, in(0).sizes().vec()), 0).contiguous();
  if (op == "ConstantOfShape") {
    auto it = n.attrs.find("value");
    at::Tensor v = it != n.attrs.end() && it->second.t.defined() ? it->second.t.reshape({-1}) : at::zeros({1}, at::kFloat);
    TESSERA_CHECK(v.numel() >= 1, ParseError, "ConstantOfShape node '", n.name, "': empty value");
    const std::vector<int64_t> shape = as_ints(in(0));
    // The size a file asks for is checked against memory before allocating it.
    double bytes = static_cast<double>(v.element_size());
    for (int64_t d : shape) {
      TESSERA_CHECK(d >= 0, ParseError, "ConstantOfShape node '", n.name, "': negative dimension ", d);
      bytes *= static_cast<double>(d);
    }
    TESSERA_CHECK(bytes <= static_cast<double>(core::MemoryLedger::allocation_budget()), ParseError,
                  "ConstantOfShape node '", n.name, "' asks for ", bytes, " bytes, more than this process may allocate");
    return at::full(shape, v[0].item(), v.options());
  }
  TESSERA_THROW(Unsupported, "node '", n.name, "': cannot fold the constant operator ", op);
}

}  // namespace tessera::lirpa::detail
