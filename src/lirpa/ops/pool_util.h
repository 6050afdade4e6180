#pragma once
// 2-D window attributes shared by Conv, AveragePool and MaxPool (ONNX layout).

#include <ATen/core/Tensor.h>

#include <vector>

#include "lirpa/ops/registry.h"
#include "tessera/core/error.h"

namespace tessera::lirpa::detail {

struct Window2d {
  std::vector<int64_t> kernel{1, 1}, stride{1, 1}, pad{0, 0}, dilation{1, 1};
};

/// Reads kernel_shape, strides, pads (symmetric only), dilations of a 2-D node.
inline Window2d read_window(const OnnxNode& n, std::vector<int64_t> kernel) {
  Window2d w;
  w.kernel = n.attr_ints("kernel_shape", kernel);
  w.stride = n.attr_ints("strides", {1, 1});
  w.dilation = n.attr_ints("dilations", {1, 1});
  auto pads = n.attr_ints("pads", {0, 0, 0, 0});
  TESSERA_CHECK(w.kernel.size() == 2 && pads.size() == 4, Unsupported, n.op_type, " node '", n.name,
                "': only 2-D windows are supported");
  TESSERA_CHECK(pads[0] == pads[2] && pads[1] == pads[3], Unsupported, n.op_type, " node '", n.name,
                "': asymmetric padding is not supported");
  TESSERA_CHECK(n.attr_int("auto_pad", 0) == 0 || !n.has("auto_pad") || n.attrs.at("auto_pad").s == "NOTSET",
                Unsupported, n.op_type, " node '", n.name, "': auto_pad is not supported");
  w.pad = {pads[0], pads[1]};
  return w;
}

/// The pooled output y [N * lead, C, H', W'] back to the input's leading dims `in_shape`
/// (all but its last three) with y's channel and spatial sizes: [N, lead..., C, H', W'].
inline at::Tensor unmerge_pooled(const at::Tensor& y, int64_t n, const std::vector<int64_t>& in_shape) {
  std::vector<int64_t> s{n};
  s.insert(s.end(), in_shape.begin(), in_shape.end() - 3);
  s.insert(s.end(), {y.size(1), y.size(2), y.size(3)});
  return y.reshape(s);
}

}  // namespace tessera::lirpa::detail
