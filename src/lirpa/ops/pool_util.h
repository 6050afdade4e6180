#pragma once
// 2-D window attributes shared by Conv, AveragePool and MaxPool (ONNX layout).

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

}  // namespace tessera::lirpa::detail
