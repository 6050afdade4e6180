// Constant folding: nodes whose inputs are all constants (mostly shape arithmetic:
// Shape -> Gather -> Unsqueeze -> Concat -> Reshape) are evaluated when the model loads.

#include <ATen/ATen.h>

#include "lirpa/io/onnx_tensor.h"
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

at::Tensor fold_slice(const OnnxNode& n, const at::Tensor& x) {
  auto starts = as_ints(n.inputs.at(1).value), ends = as_ints(n.inputs.at(2).value);
  std::vector<int64_t> axes, steps(starts.size(), 1);
  if (n.inputs.size() > 3) axes = as_ints(n.inputs[3].value);
  else for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (n.inputs.size() > 4) steps = as_ints(n.inputs[4].value);
  at::Tensor y = x;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t ax = norm_axis(axes[i], x.dim()), len = x.size(ax);
    TESSERA_CHECK(steps[i] > 0, Unsupported, "Slice node '", n.name, "': negative steps are not supported");
    int64_t s = starts[i] < 0 ? starts[i] + len : std::min(starts[i], len);
    int64_t e = ends[i] < 0 ? ends[i] + len : std::min(ends[i], len);
    y = y.slice(ax, std::max<int64_t>(s, 0), std::max<int64_t>(e, 0), steps[i]);
  }
  return y;
}

}  // namespace

at::Tensor fold_constant(const OnnxNode& n) {
  const std::string& op = n.op_type;
  auto in = [&](size_t i) { return n.inputs.at(i).value; };
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
  if (op == "Gather") {
    int64_t ax = norm_axis(n.attr_int("axis", 0), in(0).dim());
    at::Tensor idx = in(1).to(at::kLong);
    idx = at::where(idx < 0, idx + in(0).size(ax), idx);
    return at::index_select(in(0), ax, idx.reshape({-1})).reshape([&] {
      auto s = in(0).sizes().vec();
      std::vector<int64_t> out(s.begin(), s.begin() + ax);
      for (int64_t d : idx.sizes()) out.push_back(d);
      out.insert(out.end(), s.begin() + ax + 1, s.end());
      return out;
    }());
  }
  if (op == "Add") return in(0) + in(1);
  if (op == "Sub") return in(0) - in(1);
  if (op == "Mul") return in(0) * in(1);
  if (op == "Div") {
    bool ints = !at::isFloatingType(in(0).scalar_type()) && !at::isFloatingType(in(1).scalar_type());
    return ints ? at::div(in(0), in(1), "floor") : in(0) / in(1);
  }
  if (op == "Neg") return -in(0);
  if (op == "Relu") return in(0).clamp_min(0);
  if (op == "MatMul") return at::matmul(in(0), in(1));
  if (op == "Transpose") {
    std::vector<int64_t> perm = n.attr_ints("perm", {});
    if (perm.empty()) for (int64_t i = in(0).dim() - 1; i >= 0; --i) perm.push_back(i);
    return in(0).permute(perm).contiguous();
  }
  if (op == "Slice") return fold_slice(n, in(0));
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
