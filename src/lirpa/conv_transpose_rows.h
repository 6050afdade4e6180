#pragma once
// The transposed convolution of many A rows at once (CROWN's backward through a Conv, dense
// rows and patch kernels alike): A_x = W^T * A_y, one matrix product and one scatter per
// chunk of rows instead of ATen's small product and NCHW scatter per row.

#include <ATen/ATen.h>

#include <optional>
#include <vector>

namespace tessera::lirpa::detail {

/// For rows `a` [N, Co, Ho, Wo] and weights `w` [Co, Ci, KH, KW] (one group), the transposed
/// convolution with `stride`, `pad`, `out_pad` and `dilation` (at::conv_transpose2d's
/// meaning), [N, Ci, H, W], on the CPU in float32 or float64. On a gradient tape (`a`
/// requiring a gradient) it is recorded with the adjoint convolution as its backward.
/// Nothing when the rule does not hold (groups, device, dtype, `w` requiring a gradient):
/// the caller takes ATen's then.
std::optional<at::Tensor> conv_transpose_rows(const at::Tensor& a, const at::Tensor& w,
                                              const std::vector<int64_t>& stride, const std::vector<int64_t>& pad,
                                              const std::vector<int64_t>& out_pad,
                                              const std::vector<int64_t>& dilation, int64_t groups);

/// `conv_transpose_rows` where it applies, else ATen's `conv_transpose2d`.
at::Tensor conv_transpose_any(const at::Tensor& a, const at::Tensor& w, const std::vector<int64_t>& stride,
                              const std::vector<int64_t>& pad, const std::vector<int64_t>& out_pad,
                              const std::vector<int64_t>& dilation, int64_t groups);

}  // namespace tessera::lirpa::detail
