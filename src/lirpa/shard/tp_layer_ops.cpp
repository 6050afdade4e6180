// The matrix products of one TP layer, dense or convolution: y = x W^T (or conv(x, K)) on
// this rank's block, the same with |W|, rows pulled back A_x = A_y W (transposed
// convolution), and cutting a convolution into this rank's block of channels.

#include <ATen/ATen.h>

#include "lirpa/shard/tp_detail.h"
#include "tessera/lirpa/param_store.h"
#include "tessera/core/error.h"

namespace tessera::lirpa::detail {
namespace {

int64_t positions(const std::vector<int64_t>& chw) { return chw.at(1) * chw.at(2); }

/// [C_in_local, H, W] of this rank's input of a convolution.
std::vector<int64_t> local_in_shape(const TpLayer& l) {
  return {l.kernel.size(1), l.in_shape.at(1), l.in_shape.at(2)};
}

}  // namespace

int64_t tp_local_in(const TpLayer& l) {
  return l.is_conv() ? l.kernel.size(1) * positions(l.in_shape) : l.weight_t.size(0);
}

int64_t tp_local_out(const TpLayer& l) {
  return l.is_conv() ? l.kernel.size(0) * positions(l.out_shape) : l.weight_t.size(1);
}

at::Tensor tp_apply(const TpLayer& l, const at::Tensor& x, at::ScalarType dtype, bool abs) {
  const int64_t n = x.size(0), n_out = tp_local_out(l);
  if (n == 0 || n_out == 0 || tp_local_in(l) == 0) return at::zeros({n, n_out}, x.options().dtype(dtype));
  if (!l.is_conv()) {
    at::Tensor w = l.weight_t.to(dtype), xd = x.to(dtype);
    if (!abs) return at::matmul(xd, w);  // x W^T
    // x |W|^T one block of columns at a time (param_store.h): |W| is never whole
    const int64_t width = weight_block_width(n_out, w.size(0) * at::elementSize(dtype));
    if (width >= n_out) return at::matmul(xd, w.abs());
    at::Tensor y = at::empty({n, n_out}, xd.options());
    for (int64_t c0 = 0; c0 < n_out; c0 += width) {
      const int64_t m = std::min(width, n_out - c0);
      y.narrow(1, c0, m).copy_(at::matmul(xd, w.narrow(1, c0, m).abs()));  // y_J = x |W_J|^T
    }
    return y;
  }
  at::Tensor k = l.kernel.to(dtype);
  std::vector<int64_t> in = local_in_shape(l);
  at::Tensor x4 = x.to(dtype).reshape({n, in[0], in[1], in[2]});
  // conv(x, K)  (or conv(x, |K|))
  at::Tensor y = at::conv2d(x4, abs ? k.abs() : k, {}, l.conv.stride, l.conv.pad, l.conv.dilation, 1);
  return y.reshape({n, n_out});
}

at::Tensor tp_pull_back(const TpLayer& l, const at::Tensor& a, at::ScalarType dtype) {
  const int64_t s = a.size(0), n_in = tp_local_in(l), n_out = tp_local_out(l);
  if (s == 0 || n_out == 0 || n_in == 0) return at::zeros({s, n_in}, a.options().dtype(dtype));  // no rows or block
  if (!l.is_conv()) return at::matmul(a.to(dtype), l.weight_t.to(dtype).t());  // A_x = A_y W
  // A_x = K^T * A_y: the transposed convolution of every row
  at::Tensor a4 = a.to(dtype).reshape({s, l.kernel.size(0), l.out_shape[1], l.out_shape[2]});
  APtr ax = DenseA(a4).through_conv(l.kernel, l.conv, local_in_shape(l), dtype);
  return ax->dense(dtype).reshape({s, n_in});
}

TpLayer tp_cut_conv(const at::Tensor& kernel, const at::Tensor& channel_bias, const Conv2dGeometry& g,
                    const std::vector<int64_t>& in_shape, const std::vector<int64_t>& out_shape, TpSplit split,
                    bool relu, int parts, int rank) {
  TESSERA_CHECK(g.groups == 1, Unsupported, "tensor parallelism splits convolutions with groups = 1 only (got ",
                g.groups, ")");
  TESSERA_CHECK(kernel.dim() == 4 && in_shape.size() == 3 && out_shape.size() == 3 && kernel.size(0) == out_shape[0] &&
                    kernel.size(1) == in_shape[0],
                DimensionMismatch, "TP convolution: kernel ", kernel.sizes(), " does not map [C, H, W] input ",
                at::IntArrayRef(in_shape), " to ", at::IntArrayRef(out_shape));
  TpLayer l;
  l.split = split;
  l.conv = g;
  l.in_shape = in_shape;
  l.out_shape = out_shape;
  l.in_features = in_shape[0] * positions(in_shape);
  l.out_features = out_shape[0] * positions(out_shape);
  l.relu = relu;
  // per-neuron bias: b[c] at every position of channel c (zero when the Conv has none)
  at::Tensor b = channel_bias.defined() ? channel_bias.reshape({-1, 1}).to(at::kDouble)
                                        : at::zeros({out_shape[0], 1}, at::kDouble);
  b = b.expand({out_shape[0], positions(out_shape)}).reshape({-1});
  if (split == TpSplit::Column) {
    auto [off, n] = tp_block(out_shape[0], parts, rank);  // this rank's output channels
    l.kernel = kernel.slice(0, off, off + n).clone(at::MemoryFormat::Contiguous);
    l.bias = b.slice(0, off * positions(out_shape), (off + n) * positions(out_shape)).clone();
  } else if (split == TpSplit::Row) {
    auto [off, n] = tp_block(in_shape[0], parts, rank);  // this rank's input channels
    l.kernel = kernel.slice(1, off, off + n).clone(at::MemoryFormat::Contiguous);
    l.bias = b.clone();
  } else {
    l.kernel = kernel.clone(at::MemoryFormat::Contiguous);
    l.bias = b.clone();
  }
  return l;
}

}  // namespace tessera::lirpa::detail
