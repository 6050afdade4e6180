// alpha-CROWN on a tensor-parallel chain. The lower slopes of the unstable ReLUs become
// parameters in [0, 1], one set per backward pass and per row and neuron, optimised by Adam
// on the gradient of the final bound, starting from CROWN's slopes; the best bound per row is
// kept (the options and their meaning are the single-process alpha-CROWN's). The passes: the
// final one (the specification's rows), and one per layer whose neurons are whole on every
// rank (a row or replicated layer followed by a ReLU: rows [e_i; -e_i] over its unstable
// neurons, whose bounds each step recomputes with their own slopes and replaces, as one
// process does). A column layer's hidden neurons, whose bounds stay TP CROWN's (the rows of
// every rank would cross ranks), live on one rank and so do their slopes in every pass: the
// optimisation state is sharded with the layers. With zone-local intermediate bounds only the
// final pass is optimised.
//
// The pass crosses ranks only at a column layer, by one differentiable all-reduce of the
// partial rows and constants (its backward is an all-reduce of the gradient), so every rank's
// slopes receive d(bound)/d(alpha). The loss counts once (rank 0's); the slopes of neurons
// held whole on every rank (after a row or replicated layer) sum every rank's gradient.

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <cmath>
#include <map>

#include "lirpa/ops/registry.h"
#include "lirpa/propagation.h"
#include "lirpa/shard/tp_detail.h"
#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"
#include "tessera/dist/differentiable.h"

namespace tessera::lirpa::detail {
namespace {

const ParamStore& no_params() {
  static const LocalParamStore store;
  return store;
}

/// The rows `a` over a layer's output pulled back to its input, A_x = A_y W; when `a` are the
/// unit rows [e_idx; -e_idx] (`idx` defined) over a dense layer's whole output, its rows of W
/// (no dense [S, out] matrix).
at::Tensor first_pull_back(const TpLayer& l, const APtr& a, const at::Tensor& idx, at::ScalarType dtype) {
  if (!idx.defined() || l.is_conv() || l.split == TpSplit::Column)
    return tp_pull_back(l, a->dense(dtype).reshape({a->rows(), tp_local_out(l)}), dtype);
  at::Tensor w = l.weight_t.to(dtype).index_select(1, idx).t();  // W[idx, in_r]
  return at::cat({w, -w});                                        // rows e_idx W and -e_idx W
}

/// Lower bounds [S] of the rows `top_rows` [S, out] (the unit rows of `idx` when defined) over
/// layer `top`'s (whole) output with the slopes `alpha` (layer k -> [S, local neurons of
/// layer k]), differentiable in the slopes.
/// `anchor`: a zero that requires grad, added to every all-reduce's input, so that each rank
/// takes part in each backward all-reduce even when its block is empty. Collective: one
/// all-reduce per column layer.
at::Tensor alpha_pass(const TpNetwork& net, const TpState& st, int top, const APtr& top_rows, const at::Tensor& idx,
                      const std::map<int, at::Tensor>& alpha, const at::Tensor& anchor) {
  static const std::shared_ptr<const BoundOp> relu = make_relu();
  const auto& layers = net.layers();
  const OpEnv env{no_params(), st.dtype};
  const int64_t s = top_rows->rows();
  const at::TensorOptions options = at::TensorOptions().dtype(st.dtype);
  APtr rows = top_rows;
  at::Tensor bias_rep = at::zeros({s}, options);   // equal on every rank
  at::Tensor bias_part = at::zeros({s}, options);  // this rank's share of a zone's constants
  for (int j = top; j >= 0; --j) {
    const TpLayer& l = layers[j];
    const bool column = l.split == TpSplit::Column;
    at::Tensor& bias_lin = column ? bias_part : bias_rep;
    bias_lin = bias_lin + rows->contract(l.bias.to(st.dtype));  // + A b
    at::Tensor ax = j == top ? first_pull_back(l, rows, idx, st.dtype)
                             : tp_pull_back(l, rows->dense(st.dtype).reshape({s, tp_local_out(l)}), st.dtype);
    if (column) {
      // [A_x | c] = sum_r [A_y[:, out_r] W[out_r, :] | c_r]: the zone's partial rows and constants
      at::Tensor mine = at::cat({ax, bias_part.unsqueeze(1)}, 1) + anchor;
      at::Tensor both = dist::differentiable::all_reduce_sum(net.shared_comm(), mine);
      ax = both.slice(1, 0, ax.size(1));
      bias_rep = bias_rep + both.select(1, ax.size(1));
      bias_part = at::zeros_like(bias_rep);
    }
    rows = DenseA::make(ax);
    if (j == 0) break;
    TESSERA_CHECK(layers[j - 1].relu, InvalidInput, "TP layer ", j - 1, " has no ReLU after it");
    BackwardContext ctx;
    ctx.input_bounds = {st.pre[j - 1]};  // this rank's block for a column layer's neurons
    auto it = alpha.find(j - 1);
    if (it != alpha.end()) ctx.alpha = it->second;
    Backward back = relu->backward(env, rows, ctx);  // rows through the relaxation y >= alpha x
    at::Tensor& bias_relu = layers[j - 1].split == TpSplit::Column ? bias_part : bias_rep;
    if (back.bias.defined()) bias_relu = bias_relu + back.bias;
    rows = back.inputs.at(0);
  }
  const Interval in = tp_layer_input(st, 0);
  return bias_rep + rows->concretize_lower(in.lower[0], in.upper[0]);  // min over the box
}

/// Rank 0's copy of `t` everywhere (the same branches and collectives on every rank).
at::Tensor from_rank0(dist::Communicator& comm, const at::Tensor& t) {
  at::Tensor c = t.detach().contiguous().clone();
  comm.broadcast(c, 0);
  return c;
}

/// True on every rank when any rank's `stop` asks to stop.
bool any_stops(dist::Communicator& comm, const AlphaOptions& o) {
  at::Tensor flag = at::full({1}, o.stop && o.stop() ? 1.0 : 0.0, at::kDouble);
  comm.all_reduce(flag, dist::ReduceOp::Max);
  return flag.item<double>() > 0;
}

/// One backward pass: from layer `top`'s output, rows over the unstable neurons `idx` (an
/// intermediate pass, [e_idx; -e_idx]) or the specification's `rows` (idx undefined).
struct Pass {
  int top;
  at::Tensor idx;
  int64_t rows;
};

using Key = std::pair<int, int>;  // (pass top, ReLU layer)

/// The intermediate passes: each layer k >= 1 whose neurons are whole on every rank (not
/// column-split) with a ReLU after it and unstable neurons (equal on every rank).
std::vector<Pass> plan_passes(const TpNetwork& net, const TpState& st, bool intermediate) {
  std::vector<Pass> passes;
  const auto& layers = net.layers();
  for (int k = 1; intermediate && k + 1 < static_cast<int>(layers.size()); ++k) {
    if (!layers[k].relu || layers[k].split == TpSplit::Column) continue;
    const Interval& b = st.pre[k];
    at::Tensor idx = at::nonzero((b.lower < 0).logical_and(b.upper > 0).reshape({-1})).reshape({-1});
    if (idx.numel() > 0) passes.push_back({k, idx, 2 * idx.numel()});
  }
  return passes;
}

/// CROWN's slopes for every (pass, ReLU below its top): [rows, local neurons].
std::map<Key, at::Tensor> initial_slopes(const TpNetwork& net, const TpState& st, const std::vector<Pass>& passes) {
  static const std::shared_ptr<const BoundOp> relu = make_relu();
  std::map<Key, at::Tensor> alphas;
  for (const Pass& pass : passes)
    for (int k = 0; k < pass.top; ++k) {
      at::Tensor init = relu->initial_alpha(st.pre[k]).to(st.dtype);  // [1, n]
      alphas[{pass.top, k}] = init.expand({pass.rows, init.size(1)}).contiguous();
    }
  return alphas;
}

/// Rows [e_idx; -e_idx] over a layer of n neurons.
APtr unit_rows(const at::Tensor& idx, int64_t n) {
  const int64_t m = idx.numel();
  at::Tensor sign = at::cat({at::ones({m}, at::kDouble), -at::ones({m}, at::kDouble)});
  return std::make_shared<UnitRowsA>(std::vector<int64_t>{n}, at::cat({idx, idx}), sign);
}

/// `base` with the neurons idx replaced by the pass's bounds: l = lb[:m], u = -lb[m:].
Interval replaced(const Interval& base, const at::Tensor& idx, const at::Tensor& lb) {
  const int64_t m = idx.numel();
  at::Tensor l = base.lower.reshape({-1}).index_put({idx}, lb.slice(0, 0, m));
  at::Tensor u = base.upper.reshape({-1}).index_put({idx}, -lb.slice(0, m));
  return {l.reshape(base.lower.sizes()), u.reshape(base.upper.sizes())};
}

}  // namespace

at::Tensor tp_alpha_lower(const TpNetwork& net, const TpState& st, const at::Tensor& c_rows,
                          const AlphaOptions& options, bool intermediate, int& iterations) {
  at::AutoGradMode grad_mode(true);
  dist::Communicator& comm = net.comm();
  const int last = static_cast<int>(net.layers().size()) - 1;
  std::vector<Pass> passes = plan_passes(net, st, intermediate);
  passes.push_back({last, at::Tensor(), c_rows.size(0)});
  std::map<Key, at::Tensor> alphas = initial_slopes(net, st, passes);
  std::map<Key, AdamSlot> slots;
  for (auto& [k, t] : alphas) slots[k] = {at::zeros_like(t), at::zeros_like(t)};
  const double loss_weight = comm.rank() == 0 ? 1.0 : 0.0;  // the loss counts once
  at::Tensor best;
  double lr = options.lr, best_total = -INFINITY;
  int stall = 0;
  iterations = 0;
  for (int it = 0; it <= options.iterations; ++it) {
    std::map<Key, at::Tensor> params;
    for (auto& [k, t] : alphas) params[k] = t.detach().requires_grad_(true);
    at::Tensor anchor = at::zeros({}, c_rows.options()).requires_grad_(true);
    TpState cur = st;  // intermediate bounds of this step's slopes
    at::Tensor lb;
    for (const Pass& pass : passes) {
      std::map<int, at::Tensor> slopes;
      for (auto& [k, t] : params)
        if (k.first == pass.top) slopes[k.second] = t;
      if (pass.idx.defined()) {
        APtr units = unit_rows(pass.idx, net.layers()[pass.top].out_features);
        lb = alpha_pass(net, cur, pass.top, units, pass.idx, slopes, anchor);
        cur.pre[pass.top] = replaced(st.pre[pass.top], pass.idx, lb);
      } else {
        lb = alpha_pass(net, cur, pass.top, DenseA::make(c_rows), at::Tensor(), slopes, anchor);
      }
    }
    at::Tensor lbd = from_rank0(comm, lb);
    best = best.defined() && options.keep_best ? at::max(best, lbd) : lbd;  // best per row
    const double total = lbd.sum().item<double>();
    stall = total > best_total ? 0 : stall + 1;
    best_total = std::max(best_total, total);
    if (it == options.iterations || alphas.empty() || stall >= options.early_stop_patience) break;
    if (any_stops(comm, options)) break;  // the timeout: keep the best so far
    std::vector<at::Tensor> inputs;
    for (auto& [k, t] : params) inputs.push_back(t);
    // d(-sum lb)/d alpha; every rank runs the backward (its collectives)
    auto grads = torch::autograd::grad({-lb.sum() * loss_weight}, inputs, {}, false, false, true);
    size_t i = 0;
    for (auto& [k, t] : alphas) {
      at::Tensor g = grads[i++];
      if (!g.defined()) g = at::zeros_like(t);
      // slopes of neurons whole on every rank: every copy's share of the gradient
      if (net.layers()[k.second].split != TpSplit::Column) comm.all_reduce(g, dist::ReduceOp::Sum);
      adam_step(t, g, slots[k], options, lr, it + 1);
    }
    lr *= options.lr_decay;  // lr decay per step
    iterations = it + 1;
  }
  return best;
}

BoundsResult tp_alpha_bounds(const TpNetwork& net, const TpState& st, const at::Tensor& c, const BoundOptions& options,
                             bool intermediate) {
  const int64_t n = net.output_size();
  at::Tensor spec = c.defined() ? c.to(st.dtype) : at::eye(n, at::TensorOptions().dtype(st.dtype));
  BoundsResult r;
  if (options.alpha.separate_sides) {
    int steps_lower = 0, steps_upper = 0;
    r.lower = tp_alpha_lower(net, st, spec, options.alpha, intermediate, steps_lower);
    // upper of c y = -lower of (-c) y
    r.upper = options.want_upper ? -tp_alpha_lower(net, st, -spec, options.alpha, intermediate, steps_upper)
                                 : at::full_like(r.lower, INFINITY);
    r.iterations = std::max(steps_lower, steps_upper);
    return r;
  }
  at::Tensor lb = tp_alpha_lower(net, st, at::cat({spec, -spec}), options.alpha, intermediate, r.iterations);
  const int64_t k = spec.size(0);
  return {lb.slice(0, 0, k), -lb.slice(0, k), r.iterations};
}

}  // namespace tessera::lirpa::detail
