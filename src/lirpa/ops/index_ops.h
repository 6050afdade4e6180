#pragma once
// Selections of entries shared by the constant folder and the bound operators: Slice's
// ranges and Gather's indices, resolved once when the model loads.

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "lirpa/ops/registry.h"

namespace tessera::lirpa::detail {

/// One axis of a Slice: entries start, start + step, ... below end (already clamped).
struct SliceRange {
  int64_t axis, start, end, step;
};

/// The ranges of Slice node `n` on an input of `shape` (inputs from opset 10, attributes
/// before); a ParseError or Unsupported naming the node when they cannot be resolved.
std::vector<SliceRange> slice_ranges(const OnnxNode& n, const std::vector<int64_t>& shape);

/// x sliced by `ranges`, whose axes count after `lead` leading dimensions.
at::Tensor apply_slice(const at::Tensor& x, const std::vector<SliceRange>& ranges, int64_t lead);

/// The bound operator selecting `ranges` of an input of `in_shape` (the Slice operator).
std::shared_ptr<const BoundOp> make_slice(std::vector<SliceRange> ranges, std::vector<int64_t> in_shape);

/// The parts of ONNX Split node `n` on an input of `shape` with `outputs` outputs: part k
/// is entries [o_k, o_k + s_k) of the axis, s_k from the `split` input (opset 13) or
/// attribute, else `outputs` equal parts (the last one shorter when they do not divide).
std::vector<SliceRange> split_ranges(const OnnxNode& n, const std::vector<int64_t>& shape, int outputs);

/// ONNX Gather along `axis` of x (after `lead` leading dimensions) with constant
/// `indices` (negative ones count from the end): the axis is replaced by indices' shape.
at::Tensor apply_gather(const at::Tensor& x, int64_t axis, const at::Tensor& indices, int64_t lead);

}  // namespace tessera::lirpa::detail
