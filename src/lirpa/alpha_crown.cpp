// alpha-CROWN: the relaxations' free parameters (lower slopes of unstable ReLUs, tangent
// points of curves, plane mixes of products) become parameters in [0, 1], one set per
// backward pass (each intermediate node whose bounds are needed, and the output) and per
// row, optimised by Adam on the gradient of the final bound (LibTorch autograd), starting
// from CROWN's. Each step recomputes the intermediate bounds of the unstable neurons with
// their own parameters (every value in [0, 1] gives sound bounds). With
// BoundState::intersect_reference they are intersected with CROWN's (both sound, so the first
// step reproduces CROWN's bounds exactly), the gradient taken as the step's own bound's
// everywhere (straight through the intersection: on the VNN-COMP ViT 1159 the 9 rows sum to
// 18.41 after 20 steps, 17.54 with the gradient stopped where CROWN's bound is kept);
// without, they replace them, as in auto_LiRPA. The best final bound per row is kept.
// AlphaOptions::intermediate false: only the final rows' parameters, the intermediate bounds
// fixed to CROWN's (auto_LiRPA's alpha-CROWN with `fix_interm_bounds`: one backward pass per
// step). AlphaOptions::target: rows above it leave the loss, and the steps stop once every
// row is above. AlphaOptions::final_start: the final rows' parameters start from an earlier
// run's best (a final-rows run's, so a full run's first step is that run's best bound); the
// parameters at each row's best step are handed back (`best_final`).

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <set>

#include "propagation.h"
#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"

namespace tessera::lirpa::detail {

namespace {

/// What stays fixed across the steps: CROWN's bounds and the rows each start node bounds.
struct AlphaPlan {
  std::vector<std::optional<Interval>> crown;  // CROWN bounds of the activation inputs
  std::map<int, NeededBounds> rows;            // start node -> flat positions bounded
  std::set<int> from_inputs;                   // nodes bounded by ibp of their inputs' bounds
};

// Intermediate bounds with the current slopes (unstable positions; the others keep CROWN's).
void alpha_intermediate(const Graph& graph, BoundState& state, const OpEnv& env, const AlphaPlan& plan) {
  for (const Node& node : graph.nodes()) {
    if (node.id > graph.output_id()) break;
    if (node.id == 0 || !node.op->needs_input_bounds()) continue;
    for (int p : node.inputs) {
      if (state.bounds[p] || p == 0) continue;
      if (plan.from_inputs.count(p)) {  // monotone: the exact range over its inputs' current bounds
        std::vector<Interval> in;
        for (int i : graph.node(p).inputs) in.push_back(*state.bounds[i]);
        state.bounds[p] = limited(state, p, without_nan(graph.node(p).op->ibp(env, in)));
        continue;
      }
      const Interval& base = *plan.crown[p];
      const NeededBounds& needed = plan.rows.at(p);
      if (needed.per_domain() == 0) {
        state.bounds[p] = base;
        continue;
      }
      Interval tight = crown_rows(graph, state, env, p, needed.idx, true);  // [D, k]
      Interval own = with_needed(base, needed, tight);  // the slopes' gradient flows through
      if (state.intersect_reference) {
        // value: the intersection with CROWN's bounds; gradient: the step's own bound's
        // (also where CROWN's is tighter, so the slopes keep moving towards a better one)
        Interval both = with_needed(base, needed, tight, true);
        auto through = [](const at::Tensor& o, const at::Tensor& b) {
          return at::where(at::isfinite(o), o + (b - o).detach(), b);  // value b, d/do = 1
        };
        own = Interval{through(own.lower, both.lower), through(own.upper, both.upper)};
      }
      state.bounds[p] = limited(state, p, own);
    }
  }
}

// This rank's block of the rows [I; -I] over `positions` positions of each of `domains`
// domains (their own) (crown_rows splits the rows between the ranks of a sharded state with one domain).
RowBlock intermediate_rows(int64_t positions, int64_t domains, const std::shared_ptr<dist::Communicator>& state_rows) {
  const int64_t rows = 2 * positions * domains;
  return domains == 1 ? row_block(rows, state_rows) : RowBlock{0, rows, {rows}};
}

// Alphas for every (start node, activation before it), initialised to CROWN's slopes; the
// final pass's to `final_start`'s where given with the same shape `[rows, *shape]`.
void init_alphas(const Graph& graph, const AlphaPlan& plan, int64_t final_rows, int64_t domains,
                 const std::shared_ptr<dist::Communicator>& state_rows, const std::map<int, at::Tensor>& final_start,
                 std::map<std::pair<int, int>, at::Tensor>& alphas, const OpEnv& env) {
  std::map<int, int64_t> starts{{graph.output_id(), final_rows}};  // the final rows: on every rank
  for (auto& [p, needed] : plan.rows) {
    if (needed.per_domain() == 0) continue;
    RowBlock b = intermediate_rows(needed.per_domain(), domains, state_rows);  // this rank's block of [I; -I]
    starts[p] = b.end - b.begin;
  }
  for (const Node& r : graph.nodes()) {
    if (r.id == 0 || r.id > graph.output_id() || !r.op->has_alpha()) continue;
    at::Tensor init = r.op->initial_alpha(*plan.crown[r.inputs[0]]).to(env.dtype);  // [D, *shape]
    for (auto& [s, n] : starts) {
      if (s < r.id) continue;  // a pass from s relaxes s itself too
      at::Tensor t = per_row(init, n).contiguous();  // per-row copy of CROWN's slopes
      auto given = s == graph.output_id() ? final_start.find(r.id) : final_start.end();
      if (given != final_start.end() && given->second.sizes() == t.sizes())
        t = given->second.to(env.dtype).clone(at::MemoryFormat::Contiguous);  // own copy: Adam steps it in place
      alphas[{s, r.id}] = t;
    }
  }
}

}  // namespace

std::optional<Interval> intersect(const std::optional<Interval>& a, const std::optional<Interval>& b) {
  if (!a || !b) return a ? Interval{a->lower.detach(), a->upper.detach()}
                       : b ? std::optional<Interval>(Interval{b->lower.detach(), b->upper.detach()}) : std::nullopt;
  return Interval{at::max(a->lower.detach(), b->lower.detach()), at::min(a->upper.detach(), b->upper.detach())};
}

at::Tensor alpha_crown_lower(const Graph& graph, BoundState& state, const OpEnv& env, const APtr& a,
                             const AlphaOptions& options, int& iterations,
                             std::vector<std::optional<Interval>>* tightest,
                             std::map<int, at::Tensor>* best_final) {
  AlphaPlan plan;
  plan.crown = state.bounds;
  for (const Node& node : graph.nodes()) {
    if (node.id == 0 || node.id > graph.output_id() || !node.op->needs_input_bounds()) continue;
    for (int p : node.inputs) {
      if (p == 0 || plan.rows.count(p)) continue;
      if (bounds_from_inputs(graph, plan.crown, p)) {
        plan.from_inputs.insert(p);
        plan.rows[p] = NeededBounds::none(state.domains());  // no rows
        continue;
      }
      plan.rows[p] = positions_needing_bounds(graph, *node.op, p, *plan.crown[p]);
    }
  }
  if (!options.intermediate) {  // intermediate bounds fixed: no rows, no slopes but the final pass's
    plan.from_inputs.clear();
    for (auto& [p, needed] : plan.rows) needed = NeededBounds::none(state.domains());
  }
  const at::Tensor target = options.target.defined() ? options.target.to(env.dtype).reshape({-1}) : at::Tensor();
  TESSERA_CHECK(!target.defined() || target.numel() == a->rows(), DimensionMismatch, "alpha-CROWN: ", target.numel(),
                " targets for ", a->rows(), " rows");
  std::map<std::pair<int, int>, at::Tensor> alphas;
  init_alphas(graph, plan, a->rows(), state.domains(), state.shard_rows, options.final_start, alphas, env);
  // Sharded state: the final pass (and any pass too small to split) runs on every rank, but
  // its loss counts once (rank 0's): the gathers' backward sums every rank's gradient, so
  // each block's slopes receive the whole gradient; slopes held whole on every rank take
  // rank 0's gradient by a sum.
  const bool sharded = state.shard_rows && state.shard_rows->size() > 1;
  const double loss_weight = sharded && state.shard_rows->rank() != 0 ? 0.0 : 1.0;
  std::set<int> whole_starts{graph.output_id()};
  for (auto& [p, needed] : plan.rows)
    if (!intermediate_rows(needed.per_domain(), state.domains(), state.shard_rows).split) whole_starts.insert(p);
  std::map<std::pair<int, int>, AdamSlot> slots;  // created by their first step
  at::Tensor best;
  std::map<int, at::Tensor> best_params;  // the final pass's parameters at each row's best step
  double lr = options.lr, best_total = -INFINITY;
  int stall = 0;
  iterations = 0;
  for (int it = 0; it <= options.iterations; ++it) {
    state.alpha.clear();
    for (auto& [k, t] : alphas) state.alpha[k] = t.detach().requires_grad_(true);
    if (options.intermediate) {
      std::fill(state.bounds.begin() + 1, state.bounds.end(), std::nullopt);
      alpha_intermediate(graph, state, env, plan);
    }
    if (tightest) {
      for (auto& [p, needed] : plan.rows) (*tightest)[p] = intersect((*tightest)[p], state.bounds[p]);
    }
    at::Tensor lb = crown_lower(graph, state, env, graph.output_id(), a, true);
    at::Tensor lbd = lb.detach();
    if (best_final) {  // row s improved: its parameters t[s] (the final pass's are per row) are the best
      at::Tensor better = best.defined() && options.keep_best ? lbd > best : at::ones_like(lbd, at::kBool);
      for (auto& [k, t] : alphas) {
        if (k.first != graph.output_id()) continue;
        std::vector<int64_t> s(t.dim(), 1);
        s[0] = t.size(0);
        auto old = best_params.find(k.second);
        best_params[k.second] = old == best_params.end() ? t.clone() : at::where(better.reshape(s), t, old->second);
      }
    }
    best = best.defined() && options.keep_best ? at::max(best, lbd) : lbd;  // best per row
    double total = lbd.sum().item<double>();
    stall = total > best_total ? 0 : stall + 1;
    best_total = std::max(best_total, total);
    if (it == options.iterations || alphas.empty() || stall >= options.early_stop_patience) break;
    if (options.stop && options.stop()) break;  // the timeout: keep the best so far
    // loss -sum lb over the rows not yet above their target (all rows without one)
    at::Tensor open = target.defined() ? best <= target : at::ones_like(lbd, at::kBool);
    if (!open.any().item<bool>()) break;  // every row above its target: nothing left to gain
    std::vector<at::Tensor> params;
    for (auto& [k, t] : state.alpha) params.push_back(t);
    at::Tensor loss = -at::where(open, lb, at::zeros_like(lb)).sum() * loss_weight;
    auto grads = torch::autograd::grad({loss}, params, {}, false, false, true);  // d loss / d alpha
    size_t i = 0;
    for (auto& [k, t] : alphas) {
      if (sharded && whole_starts.count(k.first)) {  // replicated slopes: rank 0's gradient everywhere
        if (!grads[i].defined()) grads[i] = at::zeros_like(t);
        state.shard_rows->all_reduce(grads[i], dist::ReduceOp::Sum);
      }
      if (grads[i].defined()) adam_step(t, grads[i], slots[k], options, lr, it + 1);
      ++i;
    }
    lr *= options.lr_decay;  // lr decay per step
    iterations = it + 1;
  }
  state.alpha.clear();
  state.bounds = plan.crown;
  if (best_final) *best_final = std::move(best_params);
  return best;
}

}  // namespace tessera::lirpa::detail
