// ONNX TensorProto and AttributeProto conversion.

#include "lirpa/io/onnx_tensor.h"

#include <ATen/ATen.h>

#include <cstring>
#include <limits>

#include "tessera/core/error.h"

namespace tessera::lirpa::detail {
namespace {

template <typename T, typename Field>
at::Tensor from_field(const Field& f, at::ScalarType type, const std::vector<int64_t>& dims) {
  std::vector<T> v(f.begin(), f.end());
  return at::from_blob(v.data(), {static_cast<int64_t>(v.size())}, type).clone().reshape(dims);
}

}  // namespace

at::Tensor tensor_from_proto(const onnx::TensorProto& t, const std::string& where) {
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  // The element count is checked (no negative sizes, no overflow) before anything is sized by it.
  int64_t n = 1;
  for (int64_t d : dims) {
    TESSERA_CHECK(d >= 0, ParseError, where, ": tensor '", t.name(), "' has a negative dimension ", d);
    TESSERA_CHECK(d == 0 || n <= std::numeric_limits<int32_t>::max() / d, ParseError, where, ": tensor '",
                  t.name(), "' has more than 2^31 values");
    n *= d;
  }
  at::ScalarType type;
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT: type = at::kFloat; break;
    case onnx::TensorProto::DOUBLE: type = at::kDouble; break;
    case onnx::TensorProto::INT64: type = at::kLong; break;
    case onnx::TensorProto::INT32: type = at::kInt; break;
    case onnx::TensorProto::BOOL: type = at::kBool; break;
    default: TESSERA_THROW(Unsupported, where, ": tensor '", t.name(), "' has unsupported data type ", t.data_type());
  }
  TESSERA_CHECK(t.data_location() != onnx::TensorProto::EXTERNAL, Unsupported, where, ": tensor '", t.name(),
                "' uses external data");
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    const auto element_size = static_cast<int64_t>(c10::elementSize(type));
    TESSERA_CHECK(static_cast<int64_t>(raw.size()) == n * element_size, ParseError, where, ": tensor '", t.name(),
                  "' has ", raw.size(), " bytes for ", n, " values");  // checked before allocating
    at::Tensor out = at::empty({n}, at::TensorOptions().dtype(type));
    if (!raw.empty()) std::memcpy(out.data_ptr(), raw.data(), raw.size());  // an empty tensor has no data pointer
    return out.reshape(dims);
  }
  at::Tensor out;
  switch (type) {
    case at::kFloat: out = from_field<float>(t.float_data(), type, {-1}); break;
    case at::kDouble: out = from_field<double>(t.double_data(), type, {-1}); break;
    case at::kLong: out = from_field<int64_t>(t.int64_data(), type, {-1}); break;
    default: out = from_field<int32_t>(t.int32_data(), at::kInt, {-1}).to(type); break;
  }
  TESSERA_CHECK(out.numel() == n, ParseError, where, ": tensor '", t.name(), "' has ", out.numel(),
                " values for shape of ", n);
  return out.reshape(dims);
}

AttrValue attr_from_proto(const onnx::AttributeProto& a, const std::string& where) {
  AttrValue v;
  v.i = a.i();
  v.f = a.f();
  v.s = a.s();
  v.ints.assign(a.ints().begin(), a.ints().end());
  v.floats.assign(a.floats().begin(), a.floats().end());
  if (a.has_t()) v.t = tensor_from_proto(a.t(), where);
  return v;
}

}  // namespace tessera::lirpa::detail
