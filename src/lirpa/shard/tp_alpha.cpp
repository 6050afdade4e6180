// alpha-CROWN on a tensor-parallel chain. The lower slopes of the unstable ReLUs in the
// final backward pass become parameters in [0, 1], one per row and neuron, optimised by
// Adam on the gradient of the bound, starting from CROWN's slopes; the best bound per row is
// kept (the options and their meaning are the single-process alpha-CROWN's). A column
// layer's hidden neurons live on one rank and so do their slopes: the optimisation state is
// sharded with the layers. The intermediate bounds stay the TP CROWN (or zone-local) ones.
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

/// Lower bounds [S] of the rows `c_rows` [S, out] over the network's output with the slopes
/// `alpha` (layer k -> [S, local neurons of layer k]), differentiable in the slopes.
/// `anchor`: a zero that requires grad, added to every all-reduce's input, so that each rank
/// takes part in each backward all-reduce even when its block is empty. Collective: one
/// all-reduce per column layer.
at::Tensor alpha_pass(const TpNetwork& net, const TpState& st, const at::Tensor& c_rows,
                      const std::map<int, at::Tensor>& alpha, const at::Tensor& anchor) {
  static const std::shared_ptr<const BoundOp> relu = make_relu();
  const auto& layers = net.layers();
  const OpEnv env{no_params(), st.dtype};
  const int64_t s = c_rows.size(0);
  APtr rows = DenseA::make(c_rows);
  at::Tensor bias_rep = at::zeros({s}, c_rows.options());   // equal on every rank
  at::Tensor bias_part = at::zeros({s}, c_rows.options());  // this rank's share of a zone's constants
  for (int j = static_cast<int>(layers.size()) - 1; j >= 0; --j) {
    const TpLayer& l = layers[j];
    const bool column = l.split == TpSplit::Column;
    at::Tensor& bias_lin = column ? bias_part : bias_rep;
    bias_lin = bias_lin + rows->contract(l.bias.to(st.dtype));  // + A b
    at::Tensor ax = tp_pull_back(l, rows->dense(st.dtype).reshape({s, tp_local_out(l)}), st.dtype);  // A_x = A_y W
    if (column) {
      // [A_x | c] = sum_r [A_y[:, out_r] W[out_r, :] | c_r]: the zone's partial rows and constants
      at::Tensor both = dist::differentiable::all_reduce_sum(net.comm_ptr(), at::cat({ax, bias_part.unsqueeze(1)}, 1) + anchor);
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

}  // namespace

at::Tensor tp_alpha_lower(const TpNetwork& net, const TpState& st, const at::Tensor& c_rows,
                          const AlphaOptions& options, int& iterations) {
  at::AutoGradMode grad_mode(true);
  dist::Communicator& comm = net.comm();
  const auto& layers = net.layers();
  std::map<int, at::Tensor> alphas;  // layer -> [S, local neurons], CROWN's slopes to start
  std::map<int, bool> whole;         // layer -> slopes held whole on every rank
  static const std::shared_ptr<const BoundOp> relu = make_relu();
  for (int k = 0; k + 1 < static_cast<int>(layers.size()); ++k) {
    at::Tensor init = relu->initial_alpha(st.pre[k]).to(st.dtype);  // [1, n]
    alphas[k] = init.expand({c_rows.size(0), init.size(1)}).contiguous();
    whole[k] = layers[k].split != TpSplit::Column;
  }
  std::map<int, AdamSlot> slots;
  for (auto& [k, t] : alphas) slots[k] = {at::zeros_like(t), at::zeros_like(t)};
  const double loss_weight = comm.rank() == 0 ? 1.0 : 0.0;  // the loss counts once
  at::Tensor best;
  double lr = options.lr, best_total = -INFINITY;
  int stall = 0;
  iterations = 0;
  for (int it = 0; it <= options.iterations; ++it) {
    std::map<int, at::Tensor> params;
    for (auto& [k, t] : alphas) params[k] = t.detach().requires_grad_(true);
    at::Tensor anchor = at::zeros({}, c_rows.options()).requires_grad_(true);
    at::Tensor lb = alpha_pass(net, st, c_rows, params, anchor);
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
      if (whole[k]) comm.all_reduce(g, dist::ReduceOp::Sum);  // every copy's share of the gradient
      adam_step(t, g, slots[k], options, lr, it + 1);
    }
    lr *= options.lr_decay;  // lr decay per step
    iterations = it + 1;
  }
  return best;
}

BoundsResult tp_alpha_bounds(const TpNetwork& net, const TpState& st, const at::Tensor& c, const BoundOptions& options) {
  const int64_t n = net.output_size();
  at::Tensor spec = c.defined() ? c.to(st.dtype) : at::eye(n, at::TensorOptions().dtype(st.dtype));
  BoundsResult r;
  if (options.alpha.separate_sides) {
    int steps_lower = 0, steps_upper = 0;
    r.lower = tp_alpha_lower(net, st, spec, options.alpha, steps_lower);
    // upper of c y = -lower of (-c) y
    r.upper = options.want_upper ? -tp_alpha_lower(net, st, -spec, options.alpha, steps_upper)
                                 : at::full_like(r.lower, INFINITY);
    r.iterations = std::max(steps_lower, steps_upper);
    return r;
  }
  at::Tensor lb = tp_alpha_lower(net, st, at::cat({spec, -spec}), options.alpha, r.iterations);
  const int64_t k = spec.size(0);
  return {lb.slice(0, 0, k), -lb.slice(0, k), r.iterations};
}

}  // namespace tessera::lirpa::detail
