#pragma once
// Internals of tensor parallelism shared by its source files.

#include <ATen/core/Tensor.h>

#include <utility>
#include <vector>

#include "tessera/lirpa/tensor_parallel.h"

namespace tessera::lirpa::detail {

/// (offset, count) of rank `rank`'s block of `n` neurons (balanced contiguous blocks of
/// whole groups of `unit` neurons; `n` a multiple of `unit`).
std::pair<int64_t, int64_t> tp_block(int64_t n, int parts, int rank, int64_t unit = 1);

/// This rank's part of the layer y = x W^T + b (W [out, in]) under `split`; copies, so the
/// whole W can be freed. `unit`: the blocks are whole groups of `unit` neurons (the
/// positions of one channel when the zone's hidden neurons are a convolution's channels).
TpLayer tp_cut_layer(const at::Tensor& w, const at::Tensor& b, TpSplit split, bool relu, int parts, int rank,
                     int64_t unit = 1);

/// This rank's part of the convolution y = conv(x, K) + b (K [C_out, C_in, kh, kw], b
/// [C_out] or undefined; x, y flattened [C, H, W] of `in_shape`, `out_shape`) under
/// `split`: Column by output channels, Row by input channels. Copies.
TpLayer tp_cut_conv(const at::Tensor& kernel, const at::Tensor& channel_bias, const Conv2dGeometry& g,
                    const std::vector<int64_t>& in_shape, const std::vector<int64_t>& out_shape, TpSplit split,
                    bool relu, int parts, int rank);

/// Neurons of this rank's input / output block of a layer (the whole for a replicated side).
int64_t tp_local_in(const TpLayer& l);
int64_t tp_local_out(const TpLayer& l);

/// x [N, local in] -> [N, local out]: x W^T, or conv(x, K), with |W| or |K| when `abs`;
/// without the bias, and a row layer's result is this rank's partial sum.
at::Tensor tp_apply(const TpLayer& l, const at::Tensor& x, at::ScalarType dtype, bool abs);

/// Rows a [S, local out] pulled back to the layer's input: A_x = A_y W [S, local in] (the
/// transposed convolution for a Conv); a column layer's result is this rank's partial sum.
at::Tensor tp_pull_back(const TpLayer& l, const at::Tensor& a, at::ScalarType dtype);

}  // namespace tessera::lirpa::detail

namespace tessera::lirpa::detail {

/// Per-run state of a TP bound computation: the box and each layer's pre-activation bounds
/// (`[1, n]`; a column layer's only for this rank's block, the others whole and equal on
/// every rank).
struct TpState {
  Interval box;
  std::vector<Interval> pre;
  at::ScalarType dtype = at::kDouble;
};

/// Bounds of layer k's input: the box, or the ReLU of layer k-1's bounds.
Interval tp_layer_input(const TpState& st, int k);

/// IBP of layer k from `tp_layer_input` (collective for a row layer: one all-reduce).
Interval tp_layer_ibp(const TpNetwork& net, const TpState& st, int k);

/// CROWN: lower bounds of rows `a` (node shape {n}) over the output of layer k, pulled back
/// through layers k, ..., `stop` and concretised over layer `stop`'s input bounds.
/// `owned`: `a` are this rank's own rows over a column layer's local block (the rows of
/// every rank are gathered before a row layer; each rank gets its own rows' bounds);
/// otherwise every rank passes the same rows over a replicated output and gets all bounds.
/// Collective.
at::Tensor tp_crown_lower(const TpNetwork& net, const TpState& st, int k, int stop, const APtr& a, bool owned);

/// alpha-CROWN (tp_alpha.cpp): lower bounds [S] of the rows `c_rows` [S, out] over the
/// output, optimising the ReLU slopes of the final pass and (`intermediate`) of the passes
/// bounding the unstable neurons of layers held whole on every rank, from CROWN's (the
/// bounds in `st`); the best per row, the same on every rank. `iterations`: steps taken.
/// Collective.
at::Tensor tp_alpha_lower(const TpNetwork& net, const TpState& st, const at::Tensor& c_rows,
                          const AlphaOptions& options, bool intermediate, int& iterations);

/// alpha-CROWN bounds of `c y` (c undefined: y) with `options.alpha` (separate sides or one
/// run on [C; -C]; `want_upper`), from the CROWN bounds of `st`. Collective.
BoundsResult tp_alpha_bounds(const TpNetwork& net, const TpState& st, const at::Tensor& c, const BoundOptions& options,
                             bool intermediate);

}  // namespace tessera::lirpa::detail
