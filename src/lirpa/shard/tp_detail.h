#pragma once
// Internals of tensor parallelism shared by its source files.

#include <ATen/core/Tensor.h>

#include <functional>
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

/// The linear coefficients a backward pass leaves on the way (for branching and attacks).
struct TpPassRows {
  /// Per hidden layer j: the rows' coefficients of relu(z_j) ([S, this rank's neurons of z_j]).
  std::vector<at::Tensor> lambda;
  at::Tensor input;  ///< [S, n_in]: the rows' coefficients of the network input (stop = 0)
};

/// CROWN: lower bounds of rows `a` (node shape {n}) over the output of layer k, pulled back
/// through layers k, ..., `stop` and concretised over layer `stop`'s input bounds.
/// `owned`: `a` are this rank's own rows over a column layer's local block (the rows of
/// every rank are gathered before a row layer; each rank gets its own rows' bounds);
/// otherwise every rank passes the same rows over a replicated output and gets all bounds.
/// `keep` (optional, shared rows only): receives the coefficients met on the way. Collective.
at::Tensor tp_crown_lower(const TpNetwork& net, const TpState& st, int k, int stop, const APtr& a, bool owned,
                          TpPassRows* keep = nullptr);

/// y = f(x) [N, out] in float64, the same on every rank, with a gradient reaching x [N, in]:
/// the backward pass pulls the gradient back through each rank's blocks (one all-reduce per
/// column layer), so PGD can attack a TP network. Collective, and so is its backward (every
/// rank must run it).
at::Tensor tp_forward_differentiable(const TpNetwork& net, const at::Tensor& x);

/// Rank 0's copy of `t` on every rank (replicated values stay bitwise equal, so that every
/// rank takes the same branches and calls the same collectives). Collective.
at::Tensor same_everywhere(dist::Communicator& comm, const at::Tensor& t);

/// Tightens hidden layer k's bounds before later layers use them (ReLU split constraints,
/// a parent domain's bounds); called on every rank with its own block of the layer.
using TpClamp = std::function<void(int k, Interval& pre)>;

/// Pre-activation bounds of the hidden layers `first`, ..., L-2 appended to `st.pre` (which
/// holds those of the layers before `first`): IBP when `ibp`, else as tp_compute_bounds's
/// CROWN; each layer's bounds pass through `clamp` (when set). Collective.
void tp_hidden_bounds(const TpNetwork& net, TpState& st, bool ibp, const TpOptions& tp, int first = 0,
                      const TpClamp& clamp = {});

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
