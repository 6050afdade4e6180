// tp_compute_bounds: IBP, CROWN (and, in tp_alpha.cpp, alpha-CROWN) on a tensor-parallel
// Linear/ReLU chain.
//
// CROWN's intermediate bounds, layer by layer (as one process computes them):
//  - the first layer's: IBP, exact for an affine map of the box;
//  - a row or replicated layer's (neurons whole on every rank): the unstable neurons by
//    CROWN, every rank pulling the same rows back (or, with local_intermediate, only to
//    its zone's input box);
//  - a column layer's (this rank's block of neurons): the unstable neurons of the block by
//    CROWN on this rank's own rows, gathered before the previous zone (with
//    local_intermediate: IBP over the zone's input box, no communication).
// Every bound is sound: each is the min/max of a sound linear relaxation over a sound box.

#include <ATen/ATen.h>

#include "lirpa/shard/tp_detail.h"
#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"

namespace tessera::lirpa::detail {
namespace {

/// Rows [e_idx; -e_idx] over a node of n neurons.
APtr both_sides(int64_t n, const at::Tensor& idx) {
  const int64_t m = idx.numel();
  at::Tensor sign = at::cat({at::ones({m}, at::kDouble), -at::ones({m}, at::kDouble)});
  return std::make_shared<UnitRowsA>(std::vector<int64_t>{n}, at::cat({idx, idx}), sign);
}

/// Replaces the bounds of neurons `idx` of `ref` by CROWN's, in chunks of `chunk`
/// neurons; `rounds` chunks in all (collective: the same on every rank).
Interval tighten(const TpNetwork& net, const TpState& st, int k, int stop, Interval ref, const at::Tensor& idx,
                 bool owned, int64_t chunk, int64_t rounds) {
  at::Tensor l = ref.lower.reshape({-1}).clone(), u = ref.upper.reshape({-1}).clone();
  for (int64_t r = 0; r < rounds; ++r) {
    const int64_t s = std::min(idx.numel(), r * chunk), e = std::min(idx.numel(), s + chunk);
    at::Tensor part = idx.slice(0, s, e);
    at::Tensor lb = tp_crown_lower(net, st, k, stop, both_sides(l.numel(), part), owned);
    l.index_put_({part}, lb.slice(0, 0, e - s));
    u.index_put_({part}, -lb.slice(0, e - s));  // u = -min(-x)
  }
  return {l.reshape(ref.lower.sizes()), u.reshape(ref.upper.sizes())};
}

/// Pre-activation bounds of layer k (k >= 1, a ReLU follows).
Interval intermediate(const TpNetwork& net, const TpState& st, int k, const TpOptions& tp) {
  dist::Communicator& comm = net.comm();
  const TpLayer& layer = net.layers()[k];
  Interval ref = tp_layer_ibp(net, st, k);
  at::Tensor idx = at::nonzero((ref.lower < 0).logical_and(ref.upper > 0).reshape({-1})).reshape({-1});
  const int p = comm.size();
  if (layer.split == TpSplit::Column) {
    if (tp.local_intermediate) return ref;  // IBP over the zone's input box
    // own rows: after the gather there are P times as many, so P^2 times smaller chunks
    const int64_t chunk = std::max<int64_t>(1, 2048 / (int64_t(p) * p));
    at::Tensor rounds = at::full({1}, (idx.numel() + chunk - 1) / chunk, at::kLong);
    comm.all_reduce(rounds, dist::ReduceOp::Max);
    return tighten(net, st, k, 0, ref, idx, true, chunk, rounds.item<int64_t>());
  }
  const int64_t chunk = std::max<int64_t>(1, 2048 / p);
  const int stop = tp.local_intermediate && layer.split == TpSplit::Row ? k - 1 : (tp.local_intermediate ? k : 0);
  Interval b = tighten(net, st, k, stop, ref, idx, false, chunk, (idx.numel() + chunk - 1) / chunk);
  return {same_everywhere(comm, b.lower), same_everywhere(comm, b.upper)};
}

/// C y bounds from bounds of y: [C+ l + C- u, C+ u + C- l].
BoundsResult apply_spec(const Interval& y, const at::Tensor& c, at::ScalarType dtype) {
  at::Tensor l = y.lower.reshape({-1}), u = y.upper.reshape({-1});
  if (!c.defined()) return {l, u, 0};
  at::Tensor cc = c.to(dtype);
  return {at::matmul(cc.clamp_min(0), l) + at::matmul(cc.clamp_max(0), u),
          at::matmul(cc.clamp_min(0), u) + at::matmul(cc.clamp_max(0), l), 0};
}

}  // namespace

at::Tensor same_everywhere(dist::Communicator& comm, const at::Tensor& t) {
  at::Tensor c = t.contiguous().clone();
  comm.broadcast(c, 0);
  return c;
}

void tp_hidden_bounds(const TpNetwork& net, TpState& st, bool ibp, const TpOptions& tp, int first,
                      const TpClamp& clamp) {
  const int last = static_cast<int>(net.layers().size()) - 1;
  st.pre.resize(static_cast<size_t>(first));
  for (int k = first; k < last; ++k) {
    st.pre.push_back(ibp || k == 0 ? tp_layer_ibp(net, st, k) : intermediate(net, st, k, tp));
    if (clamp) clamp(k, st.pre.back());
  }
}

Interval tp_layer_ibp(const TpNetwork& net, const TpState& st, int k) {
  const TpLayer& l = net.layers()[k];
  const Interval in = tp_layer_input(st, k);
  at::Tensor c = tp_apply(l, (in.lower + in.upper) / 2, st.dtype, false);  // W c
  at::Tensor r = tp_apply(l, (in.upper - in.lower) / 2, st.dtype, true);   // |W| r
  if (l.split == TpSplit::Row) {
    at::Tensor both = at::cat({c, r}).contiguous();
    net.comm().all_reduce(both, dist::ReduceOp::Sum);  // sums of the blocks' partial products
    c = both.slice(0, 0, 1);
    r = both.slice(0, 1, 2);
  }
  c = c + l.bias.to(st.dtype);
  return {c - r, c + r};
}

}  // namespace tessera::lirpa::detail

namespace tessera::lirpa {

BoundsResult tp_compute_bounds(const TpNetwork& net, const at::Tensor& lower, const at::Tensor& upper,
                               const BoundOptions& options, const at::Tensor& c, const TpOptions& tp) {
  TESSERA_CHECK(options.dtype == at::kFloat || options.dtype == at::kDouble, Unsupported,
                "bounds are computed in float32 or float64");
  TESSERA_CHECK(lower.numel() == net.input_size() && upper.numel() == net.input_size(), DimensionMismatch,
                "the input box has ", lower.numel(), " values but the network takes ", net.input_size());
  TESSERA_CHECK((lower <= upper).all().item<bool>(), InvalidInput, "input box has lower > upper");
  TESSERA_CHECK(at::isfinite(lower).all().item<bool>() && at::isfinite(upper).all().item<bool>(), InvalidInput,
                "input box has non-finite values");
  TESSERA_CHECK(!c.defined() || (c.dim() == 2 && c.size(1) == net.output_size()), DimensionMismatch,
                "specification has ", c.defined() && c.dim() == 2 ? c.size(1) : -1, " columns but the network has ",
                net.output_size(), " outputs");
  at::NoGradGuard no_grad;
  detail::TpState st;
  st.dtype = options.dtype;
  st.box = {lower.to(st.dtype).reshape({1, -1}), upper.to(st.dtype).reshape({1, -1})};
  const int last = static_cast<int>(net.layers().size()) - 1;
  detail::tp_hidden_bounds(net, st, options.method == Method::Ibp, tp);
  if (options.method == Method::Ibp) {
    Interval y = detail::tp_layer_ibp(net, st, last);
    return detail::apply_spec({detail::same_everywhere(net.comm(), y.lower),
                               detail::same_everywhere(net.comm(), y.upper)}, c, st.dtype);
  }
  if (options.method == Method::AlphaCrown)  // tp_alpha.cpp
    return detail::tp_alpha_bounds(net, st, c, options, !tp.local_intermediate);
  // rows [C; -C] (or [I; -I]) over the output, pulled back to the input box
  const int64_t n = net.output_size();
  APtr rows = c.defined() ? DenseA::make(at::cat({c, -c}).to(st.dtype))
                          : detail::both_sides(n, at::arange(n, at::kLong));
  at::Tensor lb = detail::same_everywhere(net.comm(), detail::tp_crown_lower(net, st, last, 0, rows, false));
  const int64_t k = rows->rows() / 2;
  return {lb.slice(0, 0, k), -lb.slice(0, k), 0};  // upper of c y = -lower of (-c) y
}

}  // namespace tessera::lirpa
