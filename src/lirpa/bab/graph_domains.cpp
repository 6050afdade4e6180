// Bounding a batch of graph domains (graph_bab.h): the graph engine's CROWN under BoundState
// limits (each split neuron's pre-activation clamped, the parent's bounds intersected in),
// alpha-CROWN on request, then split multipliers and the final rows' slopes for the domains
// left open; the ReLU nodes of a graph and the domains' boxes and start parameters.

#include <ATen/ATen.h>

#include <functional>
#include <limits>
#include <map>

#include "lirpa/bab/domain_blocks.h"
#include "lirpa/bab/graph_bab.h"
#include "lirpa/bab/graph_beta.h"
#include "lirpa/ops/registry.h"
#include "lirpa/propagation.h"
#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"

namespace tessera::lirpa::detail {

std::vector<GraphRelu> graph_relus(const Graph& graph) {
  std::vector<GraphRelu> out;
  for (const Node& node : graph.nodes()) {
    if (node.id == 0 || node.id > graph.output_id() || !is_relu(*node.op)) continue;
    int64_t n = 1;
    for (int64_t s : graph.node(node.inputs.at(0)).shape) n *= s;
    out.push_back(GraphRelu{node.id, node.inputs.at(0), n});
  }
  return out;
}

RowParams RowParams::select(const at::Tensor& index) const {
  RowParams out;
  for (const at::Tensor& a : alpha) out.alpha.push_back(a.defined() ? a.index_select(0, index) : a);
  for (const at::Tensor& b : beta) out.beta.push_back(b.defined() ? b.index_select(0, index) : b);
  return out;
}

std::pair<at::Tensor, at::Tensor> GraphDomains::boxes(const at::Tensor& sel) const {
  const int64_t n_in = xl.size(-1);
  at::Tensor l = xl.reshape({-1, n_in}), u = xu.reshape({-1, n_in});
  at::Tensor r = root.defined() ? root.index_select(0, sel) : at::zeros({sel.numel()}, at::kLong);
  return {l.index_select(0, r), u.index_select(0, r)};
}

int64_t RowParams::bytes() const {
  int64_t n = 0;
  for (const at::Tensor& a : alpha) n += a.defined() ? a.numel() * a.element_size() : 0;
  for (const at::Tensor& b : beta) n += b.defined() ? b.numel() * b.element_size() : 0;
  return n;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
/// Inputs of at most this many dimensions get forward linear bounds as the reference of the
/// intermediate bounds (BoundState::forward_forms): each node's forms cost n + 1 forward passes.
constexpr int64_t kForwardFormsMaxInputs = 16;

// The dense rows [D, K, n] recorded at `node` for D domains (zeros when no row reached it).
at::Tensor recorded(const std::map<int, APtr>& rec, int node, int64_t domains, int64_t k, int64_t n) {
  auto it = rec.find(node);
  if (it == rec.end() || !it->second) return at::zeros({domains, k, n}, at::kDouble);
  return it->second->dense(at::kDouble).detach().reshape({domains, k, n});
}

// The bounds of the domains `sel` of `d`, bounded together: one state with D = |sel| domains
// whose inherited bounds of ReLU nodes 0..reuse are taken as they are. With `shard`, `sel` is
// this rank's block of a group of `batch_domains` domains (graph_bab.h).
struct BatchBounds {
  at::Tensor lb;                          // [D, K]
  at::Tensor lb_recorded;                 // [D, K] the bound of lambda's and a_input's pass
  std::vector<at::Tensor> lower, upper;   // per ReLU node [D, n_j]
  std::vector<at::Tensor> lambda;         // per ReLU node [D, K, n_j]
  at::Tensor a_input;                     // [D, K, n_in]
  at::Tensor infeasible;                  // [D] bool
  RowParams params;                       // with beta: per ReLU node [D, K, n_j]
};

BatchBounds bound_batch(const Graph& graph, const std::vector<GraphRelu>& relus, const GraphDomains& d,
                        const at::Tensor& sel, int64_t reuse, const at::Tensor& c, const at::Tensor& rhs,
                        const AlphaOptions* alpha, const BetaOptions* beta, const std::function<bool()>& stop,
                        const std::shared_ptr<dist::Communicator>& shard, int64_t batch_domains) {
  at::NoGradGuard no_grad;
  OpEnv env{graph.params(), at::kDouble};
  const int64_t domains = sel.numel(), k = c.size(0), n_in = graph.input_size();
  BoundState state(graph.nodes().size());
  state.limits.resize(graph.nodes().size());
  state.intersect_reference = true;  // as the incomplete stage's bounds
  state.forward_forms = n_in <= kForwardFormsMaxInputs;
  state.intersect_padding = d.intersect_padding;
  state.shard_domains = shard;
  state.batch_domains = batch_domains;
  auto [box_l, box_u] = d.boxes(sel);  // [D, n_in]
  state.bounds[0] = Interval{box_l.reshape(lead_shape(graph, 0, domains)), box_u.reshape(lead_shape(graph, 0, domains))};
  if (d.root_limits) {  // the problem box's bounds hold on each of its domains
    for (const auto& [node, b] : *d.root_limits) {
      auto spread = [&](const at::Tensor& t) {
        return t.to(at::kDouble).reshape({1, -1}).expand({domains, -1}).reshape(lead_shape(graph, node, domains));
      };
      state.limits[node] = Interval{spread(b.lower), spread(b.upper)};
    }
  }
  const bool inherit = !d.lower.empty();
  for (size_t j = 0; j < relus.size(); ++j) {
    const GraphRelu& r = relus[j];
    at::Tensor s = d.split[j].index_select(0, sel);
    at::Tensor l = inherit ? d.lower[j].index_select(0, sel) : at::full({domains, r.size}, -kInf, at::kDouble);
    at::Tensor u = inherit ? d.upper[j].index_select(0, sel) : at::full({domains, r.size}, kInf, at::kDouble);
    l = at::where(s > 0, l.clamp_min(0), l);  // active: z >= 0
    u = at::where(s < 0, u.clamp_max(0), u);  // inactive: z <= 0
    Interval lim{l.reshape(lead_shape(graph, r.input, domains)), u.reshape(lead_shape(graph, r.input, domains))};
    // several ReLU nodes on one input: every limit applies
    state.limits[r.input] = limited(state, r.input, lim);
  }
  if (inherit) {
    for (int64_t j = 0; j <= reuse && j < static_cast<int64_t>(relus.size()); ++j)
      state.bounds[relus[j].input] = state.limits[relus[j].input];
  }
  crown_intermediate(graph, state, env, graph.output_id());
  BatchBounds out;
  out.infeasible = at::zeros({domains}, at::kBool);
  for (size_t j = 0; j < relus.size(); ++j) {
    const Interval& z = *state.bounds[relus[j].input];
    out.lower.push_back(z.lower.reshape({domains, -1}));
    out.upper.push_back(z.upper.reshape({domains, -1}));
    // empty only where a split's side contradicts the bounds: crossing bounds elsewhere come
    // from rounding (the parent's bounds and CROWN's are both sound on the domain), and an
    // input box is never empty
    at::Tensor split = d.split[j].index_select(0, sel) != 0;
    out.infeasible = out.infeasible.logical_or((out.lower.back() > out.upper.back()).logical_and(split).any(1));
  }
  // K rows c per domain, domain-major
  at::Tensor c_rows = c.to(at::kDouble).repeat({domains, 1});
  APtr rows = DenseA::make(c_rows.reshape(lead_shape(graph, graph.output_id(), domains * k)));
  std::map<int, APtr> rec{{0, nullptr}};
  for (const GraphRelu& r : relus) rec[r.node] = nullptr;
  state.record = &rec;
  out.lb = crown_lower(graph, state, env, graph.output_id(), rows, false).reshape({domains, k}) - rhs;
  state.record = nullptr;
  for (const GraphRelu& r : relus) out.lambda.push_back(recorded(rec, r.node, domains, k, r.size));
  out.a_input = recorded(rec, 0, domains, k, n_in);
  out.lb_recorded = out.lb.clone();
  if (alpha) {
    int steps = 0;
    at::AutoGradMode grad(true);
    at::Tensor lb = alpha_crown_lower(graph, state, env, rows, *alpha, steps).detach().reshape({domains, k}) - rhs;
    out.lb = at::max(out.lb, lb);  // both sound: the better one
  }
  if (d.lb_floor.defined()) out.lb = at::max(out.lb, d.lb_floor.index_select(0, sel));  // the parent's: sound here too
  // split multipliers for the domains that are still open (and feasible)
  at::Tensor open = at::nonzero((best_rows(out.lb, d.row_group).second <= 0).logical_and(out.infeasible.logical_not())).reshape({-1});
  // with a shard, every rank optimises when some rank has open domains (the same steps):
  // one with none steps a stand-in, domain 0, and keeps nothing of it
  bool any_open = open.numel() > 0;
  if (shard && beta) any_open = on_any_rank(*shard, any_open);
  const bool stand_in = any_open && open.numel() == 0;
  if (beta) {  // every domain's parameters: zeros (sound, unused) where not optimised
    for (const GraphRelu& r : relus) {
      out.params.alpha.push_back(at::zeros({domains, k, r.size}, at::kDouble));
      out.params.beta.push_back(at::zeros({domains, k, r.size}, at::kDouble));
    }
  }
  if (beta && any_open) {
    if (stand_in) open = at::zeros({1}, at::kLong);
    BoundState sub = open.numel() == domains ? std::move(state) : select_domains(state, open);
    std::vector<at::Tensor> split;
    for (const at::Tensor& sp : d.split) split.push_back(sp.index_select(0, sel).index_select(0, open));
    APtr open_rows = DenseA::make(c.to(at::kDouble).repeat({open.numel(), 1}).reshape(
        lead_shape(graph, graph.output_id(), open.numel() * k)));
    RowParams start = d.start.empty() ? RowParams{} : d.start.select(sel).select(open), end;
    // branching and vertex candidates from the coefficients at the optimisation's end, not
    // CROWN's: those of its last pass, the one `end` was taken at for every domain still open
    LastPass last;
    last.rows[0] = nullptr;
    for (const GraphRelu& r : relus) last.rows[r.node] = nullptr;
    // float32 steps (BetaOptions::float32_steps), then the float64 pass below at their end
    const bool single = beta->float32_steps;
    at::Tensor lb;
    std::map<int, at::Tensor> end_other;  // the other relaxations' parameters at the float32 steps' end
    if (single) {
      BoundState sub32 = with_dtype(sub, at::kFloat);
      OpEnv env32{graph.params(), at::kFloat};
      optimise_beta(graph, sub32, env32, relus, split, DenseA::make(open_rows->dense(at::kFloat)), rhs.to(at::kFloat),
                    out.lb.index_select(0, open).to(at::kFloat), *beta, stop, shard.get(), start, &end, nullptr,
                    d.alpha_start.get(), d.row_group, &end_other);
      for (at::Tensor& a : end.alpha) a = a.defined() ? a.to(at::kDouble) : a;
      for (at::Tensor& b : end.beta) b = b.defined() ? b.to(at::kDouble) : b;
    } else {
      lb = optimise_beta(graph, sub, env, relus, split, open_rows, rhs, out.lb.index_select(0, open), *beta, stop,
                         shard.get(), start, &end, &last, d.alpha_start.get(), d.row_group);
    }
    if (!last.taken) {  // no step ran, or float32's: one pass at `end` (a stand-in too: every rank in step)
      last.lb = record_at(graph, sub, env, relus, split, open_rows, end, last.rows, &end_other).reshape({-1, k}) - rhs;
      last.domains = at::arange(open.numel(), at::kLong);
    }
    if (single) lb = at::max(out.lb.index_select(0, open), last.lb);  // CROWN's and the float64 pass's: both sound
    if (!stand_in) {
      out.lb.index_copy_(0, open, lb);
      for (size_t j = 0; j < end.alpha.size(); ++j) {
        if (end.alpha[j].defined()) out.params.alpha[j].index_copy_(0, open, end.alpha[j]);
        out.params.beta[j].index_copy_(0, open, end.beta[j]);
      }
      const int64_t m = last.domains.numel();
      at::Tensor pos = open.index_select(0, last.domains);  // the last pass's domains among the batch's
      out.lb_recorded.index_copy_(0, pos, last.lb);
      for (size_t j = 0; j < relus.size(); ++j)
        out.lambda[j].index_copy_(0, pos, recorded(last.rows, relus[j].node, m, k, relus[j].size));
      out.a_input.index_copy_(0, pos, recorded(last.rows, 0, m, k, n_in));
    }
  }
  // a NaN bound (an overflowed relaxation) proves nothing: -inf
  out.lb = at::where(at::isnan(out.lb), at::full_like(out.lb, -kInf), out.lb);
  out.lb_recorded = at::where(at::isnan(out.lb_recorded), at::full_like(out.lb, -kInf), out.lb_recorded);
  // the constraints of an infeasible domain contradict each other: nothing to prove there
  at::Tensor bad = out.infeasible.view({domains, 1});
  out.lb = at::where(bad, at::full_like(out.lb, kInf), out.lb);
  out.lb_recorded = at::where(bad, at::full_like(out.lb, kInf), out.lb_recorded);
  for (at::Tensor& l : out.lambda) l.masked_fill_(bad.view({domains, 1, 1}), 0.0);
  out.a_input.masked_fill_(bad.view({domains, 1, 1}), 0.0);
  return out;
}

}  // namespace

GraphBounded bound_graph_domains(const Graph& graph, const std::vector<GraphRelu>& relus, const GraphDomains& d,
                                 const at::Tensor& c, const at::Tensor& rhs, const AlphaOptions* alpha,
                                 const BetaOptions* beta, const std::function<bool()>& stop,
                                 const std::shared_ptr<dist::Communicator>& shard) {
  TESSERA_CHECK(!(alpha && shard && shard->size() > 1), InvalidInput,
                "graph domains: alpha-CROWN over domains split across ranks is not supported");
  const int64_t batch = d.size(), k = c.size(0), n_in = graph.input_size();
  GraphBounded out;
  out.lb = at::full({batch, k}, -kInf, at::kDouble);
  out.lb_recorded = at::full({batch, k}, -kInf, at::kDouble);
  out.a_input = at::zeros({batch, k, n_in}, at::kDouble);
  out.bounds.infeasible = at::zeros({batch}, at::kBool);
  for (const GraphRelu& r : relus) {
    out.bounds.lower.push_back(at::full({batch, r.size}, -kInf, at::kDouble));
    out.bounds.upper.push_back(at::full({batch, r.size}, kInf, at::kDouble));
    out.lambda.push_back(at::zeros({batch, k, r.size}, at::kDouble));
    if (beta) {
      out.params.alpha.push_back(at::zeros({batch, k, r.size}, at::kDouble));
      out.params.beta.push_back(at::zeros({batch, k, r.size}, at::kDouble));
    }
  }
  // domains that reuse their parent's bounds up to the same ReLU node are bounded together
  std::map<int64_t, std::vector<int64_t>> by_reuse;
  for (int64_t b = 0; b < batch; ++b)
    by_reuse[d.reuse_upto.defined() ? d.reuse_upto[b].item<int64_t>() : -1].push_back(b);
  for (const auto& [reuse, members] : by_reuse) {
    if (stop && stop()) break;
    at::Tensor sel = at::tensor(members, at::kLong);
    // with a shard, each rank bounds its block of the group and the blocks are gathered
    ChildBlock block = child_block(shard.get(), sel.numel());
    BatchBounds one = bound_batch(graph, relus, d, sel.slice(0, block.lo, block.hi), reuse, c, rhs, alpha, beta, stop,
                                  block.split() ? shard : nullptr, sel.numel());
    out.bounded_here += block.stand_in ? 0 : block.size();
    if (block.split()) {
      auto all = [&](const at::Tensor& t) { return gather_block(*shard, block, t); };
      one.lb = all(one.lb), one.lb_recorded = all(one.lb_recorded), one.a_input = all(one.a_input);
      one.infeasible = all(one.infeasible.to(at::kLong)) != 0;
      for (size_t j = 0; j < relus.size(); ++j)
        one.lower[j] = all(one.lower[j]), one.upper[j] = all(one.upper[j]), one.lambda[j] = all(one.lambda[j]);
      for (size_t j = 0; j < one.params.alpha.size(); ++j)
        one.params.alpha[j] = all(one.params.alpha[j]), one.params.beta[j] = all(one.params.beta[j]);
    }
    out.lb.index_copy_(0, sel, one.lb);
    out.lb_recorded.index_copy_(0, sel, one.lb_recorded);
    out.a_input.index_copy_(0, sel, one.a_input);
    out.bounds.infeasible.index_copy_(0, sel, one.infeasible);
    for (size_t j = 0; j < relus.size(); ++j) {
      out.bounds.lower[j].index_copy_(0, sel, one.lower[j]);
      out.bounds.upper[j].index_copy_(0, sel, one.upper[j]);
      out.lambda[j].index_copy_(0, sel, one.lambda[j]);
    }
    for (size_t j = 0; j < one.params.alpha.size(); ++j) {
      out.params.alpha[j].index_copy_(0, sel, one.params.alpha[j]);
      out.params.beta[j].index_copy_(0, sel, one.params.beta[j]);
    }
    out.bounded += sel.numel();
  }
  return out;
}

}  // namespace tessera::lirpa::detail
