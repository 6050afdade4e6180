#pragma once
// Internals of tensor parallelism shared by its source files.

#include <ATen/core/Tensor.h>

#include <utility>

#include "tessera/lirpa/tensor_parallel.h"

namespace tessera::lirpa::detail {

/// (offset, count) of rank `rank`'s block of `n` neurons (balanced contiguous blocks).
std::pair<int64_t, int64_t> tp_block(int64_t n, int parts, int rank);

/// This rank's part of the layer y = x W^T + b (W [out, in]) under `split`; copies, so the
/// whole W can be freed.
TpLayer tp_cut_layer(const at::Tensor& w, const at::Tensor& b, TpSplit split, bool relu, int parts, int rank);

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

}  // namespace tessera::lirpa::detail
