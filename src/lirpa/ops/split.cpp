// Split: y_k = x[..., o_k : o_k + s_k, ...] along one axis, for consecutive parts of sizes
// s_k (o_k = s_0 + ... + s_{k-1}). Each output is a Slice of the input (slice.cpp), exact in
// IBP and CROWN; the loader adds one Slice node per output.

#include <ATen/ATen.h>

#include "lirpa/ops/index_ops.h"
#include "tessera/core/error.h"

namespace tessera::lirpa::detail {

std::vector<SliceRange> split_ranges(const OnnxNode& n, const std::vector<int64_t>& shape, int outputs) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t axis = n.attr_int("axis", 0);
  axis = axis < 0 ? axis + rank : axis;
  TESSERA_CHECK(axis >= 0 && axis < rank, ParseError, "Split node '", n.name, "': axis ", n.attr_int("axis", 0),
                " is outside a tensor of rank ", rank);
  TESSERA_CHECK(outputs >= 1, ParseError, "Split node '", n.name, "' has no output");
  const int64_t len = shape[axis];
  std::vector<int64_t> sizes = n.attr_ints("split", {});
  if (n.inputs.size() > 1) {  // opset >= 13: the sizes are the second input
    TESSERA_CHECK(n.inputs[1].is_const(), Unsupported, "Split node '", n.name, "': the split sizes must be constant");
    at::Tensor l = n.inputs[1].value.to(at::kLong).contiguous().reshape({-1});
    sizes.assign(l.data_ptr<int64_t>(), l.data_ptr<int64_t>() + l.numel());
  }
  if (sizes.empty()) {  // equal parts of ceil(len / outputs)
    const int64_t part = (len + outputs - 1) / outputs;
    for (int k = 0; k < outputs; ++k) sizes.push_back(std::clamp<int64_t>(len - k * part, 0, part));
  }
  TESSERA_CHECK(static_cast<int>(sizes.size()) == outputs, ParseError, "Split node '", n.name, "': ", sizes.size(),
                " sizes for ", outputs, " outputs");
  std::vector<SliceRange> out;
  int64_t start = 0;
  for (int64_t s : sizes) {
    TESSERA_CHECK(s >= 0 && start + s <= len, ParseError, "Split node '", n.name, "': sizes do not fit the axis of length ",
                  len);
    out.push_back({axis, start, start + s, 1});
    start += s;
  }
  TESSERA_CHECK(start == len, ParseError, "Split node '", n.name, "': sizes sum to ", start, ", not the axis length ", len);
  return out;
}

}  // namespace tessera::lirpa::detail
