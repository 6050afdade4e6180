// ReLU-splitting branch and bound on the graph engine: relu_split_bab's search (domain pool,
// BaBSR, children that inherit their parent's bounds, vertex checks, periodic PGD) with each
// domain bounded by the graph engine's CROWN under BoundState limits (graph_bab.h).

#include <ATen/ATen.h>

#include <functional>
#include <limits>
#include <optional>

#include "lirpa/attack/pgd.h"
#include "lirpa/bab/domain_blocks.h"
#include "lirpa/bab/domain_pool.h"
#include "lirpa/bab/graph_bab.h"
#include "lirpa/bab/graph_beta.h"
#include "lirpa/bab/relu_bab.h"
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

int64_t RowParams::bytes() const {
  int64_t n = 0;
  for (const at::Tensor& a : alpha) n += a.defined() ? a.numel() * a.element_size() : 0;
  for (const at::Tensor& b : beta) n += b.defined() ? b.numel() * b.element_size() : 0;
  return n;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The dense rows [D, K, n] recorded at `node` for D domains (zeros when no row reached it).
at::Tensor recorded(const std::map<int, APtr>& rec, int node, int64_t domains, int64_t k, int64_t n) {
  auto it = rec.find(node);
  if (it == rec.end() || !it->second) return at::zeros({domains, k, n}, at::kDouble);
  return it->second->dense(at::kDouble).reshape({domains, k, n});
}

// The bounds of the domains `sel` of `d`, bounded together: one state with D = |sel| domains
// whose inherited bounds of ReLU nodes 0..reuse are taken as they are. With `shard`, `sel` is
// this rank's block of a group of `batch_domains` domains (graph_bab.h).
struct BatchBounds {
  at::Tensor lb;                          // [D, K]
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
  state.shard_domains = shard;
  state.batch_domains = batch_domains;
  state.bounds[0] = Interval{d.xl.reshape({1, n_in}).expand({domains, n_in}).reshape(lead_shape(graph, 0, domains)),
                             d.xu.reshape({1, n_in}).expand({domains, n_in}).reshape(lead_shape(graph, 0, domains))};
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
  for (const GraphRelu& r : relus) {
    const Interval& z = *state.bounds[r.input];
    out.lower.push_back(z.lower.reshape({domains, -1}));
    out.upper.push_back(z.upper.reshape({domains, -1}));
    out.infeasible = out.infeasible.logical_or((out.lower.back() > out.upper.back()).any(1));
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
  if (alpha) {
    int steps = 0;
    at::AutoGradMode grad(true);
    at::Tensor lb = alpha_crown_lower(graph, state, env, rows, *alpha, steps).detach().reshape({domains, k}) - rhs;
    out.lb = at::max(out.lb, lb);  // both sound: the better one
  }
  // split multipliers for the domains that are still open (and feasible)
  at::Tensor open = at::nonzero((out.lb.amax(1) <= 0).logical_and(out.infeasible.logical_not())).reshape({-1});
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
    RowParams start = d.start.empty() ? RowParams{} : d.start.select(sel).select(open), best;
    at::Tensor lb = optimise_beta(graph, sub, env, relus, split, open_rows, rhs, out.lb.index_select(0, open), *beta,
                                  stop, shard.get(), start, &best);
    if (!stand_in) {
      out.lb.index_copy_(0, open, lb);
      for (size_t j = 0; j < best.alpha.size(); ++j) {
        if (best.alpha[j].defined()) out.params.alpha[j].index_copy_(0, open, best.alpha[j]);
        out.params.beta[j].index_copy_(0, open, best.beta[j]);
      }
    }
  }
  // a NaN bound (an overflowed relaxation) proves nothing: -inf
  out.lb = at::where(at::isnan(out.lb), at::full_like(out.lb, -kInf), out.lb);
  // the constraints of an infeasible domain contradict each other: nothing to prove there
  at::Tensor bad = out.infeasible.view({domains, 1});
  out.lb = at::where(bad, at::full_like(out.lb, kInf), out.lb);
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
      one.lb = all(one.lb), one.a_input = all(one.a_input);
      one.infeasible = all(one.infeasible.to(at::kLong)) != 0;
      for (size_t j = 0; j < relus.size(); ++j)
        one.lower[j] = all(one.lower[j]), one.upper[j] = all(one.upper[j]), one.lambda[j] = all(one.lambda[j]);
      for (size_t j = 0; j < one.params.alpha.size(); ++j)
        one.params.alpha[j] = all(one.params.alpha[j]), one.params.beta[j] = all(one.params.beta[j]);
    }
    out.lb.index_copy_(0, sel, one.lb);
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

namespace {

struct Scored {
  GraphDomains d;
  GraphBounded g;
  at::Tensor rows, score, layer, neuron;
};

// Bounds `d` and chooses each domain's split; false when the run expired on the way.
bool bound_and_choose(GraphBabContext& ctx, const std::vector<GraphRelu>& relus, const BabProblem& p,
                      Scored& s, const AlphaOptions* alpha) {
  s.g = bound_graph_domains(ctx.graph, relus, s.d, p.c, p.rhs, alpha, &ctx.options.beta,
                            [&ctx] { return ctx.expired(); }, ctx.state_comm);
  if (s.g.bounded < s.d.size()) return false;
  std::tie(s.rows, s.score) = best_rows(s.g.lb);
  if (ctx.options.bab.branching == ReluBranching::FSB)
    std::tie(s.layer, s.neuron) =
        graph_fsb_choice(ctx.graph, relus, s.d, s.g, s.rows, p.c, p.rhs, ctx.options.bab.fsb_topk);
  else
    std::tie(s.layer, s.neuron) = babsr_choice(s.g.bounds, s.g.lambda, s.d.split, s.rows);
  return true;
}

bool try_vertices(GraphBabContext& ctx, const BabProblem& p, const Scored& s, const at::Tensor& open) {
  at::NoGradGuard no_grad;
  const int64_t n = open.numel();
  if (n == 0) return false;
  at::Tensor xl = p.xl.reshape({1, -1}).expand({n, p.xl.numel()}), xu = p.xu.reshape({1, -1}).expand({n, p.xu.numel()});
  at::Tensor x = minimising_vertex(s.g.a_input.index_select(0, open), s.rows.index_select(0, open), xl, xu);
  at::Tensor v = conjunction_violation(ctx.graph.forward(x, at::kDouble), p.c, p.rhs);
  at::Tensor cand = at::nonzero(v <= 0).reshape({-1});
  for (int64_t i = 0; i < std::min<int64_t>(cand.numel(), 16); ++i)
    if (ctx.confirm(x[cand[i].item<int64_t>()])) return true;
  return false;
}

// Moves the open domains of `s` into the pool (ReluPoolLayout without the root field; slopes
// and multipliers as float32 [B, K, n_j], or [B, 0] once dropped), with them while
// `inherit` (the pool's share of them within `max_bytes`; beyond, none are kept from then on).
void keep_open(const ReluPoolLayout& lay, TensorPool& pool, const Scored& s, const at::Tensor& open, bool& inherit,
               int64_t max_bytes) {
  if (open.numel() == 0) return;
  const RowParams kept = inherit && !s.g.params.empty() ? s.g.params.select(open) : RowParams{};
  const int64_t per_domain = kept.bytes() / 2 / open.numel();  // float32 in the pool
  if (inherit && (kept.empty() || (pool.size() + open.numel()) * per_domain > max_bytes)) {
    inherit = false;
    for (size_t j = 0; j < lay.relus; ++j) {
      pool.clear_field(lay.alpha(j));
      pool.clear_field(lay.beta(j));
    }
  }
  std::vector<at::Tensor> f(lay.neuron() + 1);
  for (size_t j = 0; j < lay.relus; ++j) {
    f[lay.split(j)] = s.d.split[j].index_select(0, open);
    f[lay.lower(j)] = s.g.bounds.lower[j].index_select(0, open);
    f[lay.upper(j)] = s.g.bounds.upper[j].index_select(0, open);
    f[lay.alpha(j)] = inherit ? kept.alpha[j].to(at::kFloat) : at::empty({open.numel(), 0}, at::kFloat);
    f[lay.beta(j)] = inherit ? kept.beta[j].to(at::kFloat) : at::empty({open.numel(), 0}, at::kFloat);
  }
  f[lay.layer()] = s.layer.index_select(0, open);
  f[lay.neuron()] = s.neuron.index_select(0, open);
  pool.push(f, s.score.index_select(0, open));
}

}  // namespace

BabOutcome graph_relu_split_bab(GraphBabContext& ctx, const BabProblem& p) {
  const VerifyOptions& o = ctx.options;
  const int64_t batch = o.bab.batch_size > 0 ? o.bab.batch_size : 64;  // BabOptions: 64 for ReLU splitting
  const std::vector<GraphRelu> relus = graph_relus(ctx.graph);
  ReluPoolLayout lay{relus.size()};
  BabOutcome out;
  if (relus.empty()) {  // sigmoid or tanh only: nothing to split, the incomplete stage's bounds stand
    out.reason = "the network has no ReLU to split (branch and bound splits ReLUs only)";
    return out.status = BabStatus::Exhausted, out;
  }
  Scored root;
  root.d.xl = p.xl;
  root.d.xu = p.xu;
  for (const GraphRelu& r : relus) root.d.split.push_back(at::zeros({1, r.size}, at::kChar));
  // the root by CROWN, from the incomplete stage's intermediate bounds when it has them all
  // (its slopes are not handed over yet); the children are bounded by CROWN and beta
  bool seeded = ctx.root_intermediate != nullptr;
  for (const GraphRelu& r : relus) seeded = seeded && ctx.root_intermediate->count(r.input) > 0;
  if (seeded) {
    for (const GraphRelu& r : relus) {
      const Interval& b = ctx.root_intermediate->at(r.input);
      root.d.lower.push_back(b.lower.to(at::kDouble).reshape({1, r.size}));
      root.d.upper.push_back(b.upper.to(at::kDouble).reshape({1, r.size}));
    }
    root.d.reuse_upto = at::full({1}, static_cast<int64_t>(relus.size()) - 1, at::kLong);
  }
  if (!bound_and_choose(ctx, relus, p, root, nullptr)) return out.status = BabStatus::Timeout, out;
  out.visited = 1;
  out.lower = root.score.min().item<double>();
  at::Tensor open = at::nonzero(root.score <= o.margin).reshape({-1});
  if (open.numel() == 0) return out.status = BabStatus::Proven, out;
  if (try_vertices(ctx, p, root, open)) return out.status = BabStatus::Falsified, out;
  TensorPool pool;
  int64_t stuck = 0;  // unverified domains with nothing left to split
  bool inherit = true;  // children start from their parent's slopes and multipliers
  keep_open(lay, pool, root, open, inherit, o.bab.inherit_max_bytes);
  auto last_report = Clock::now();
  for (int64_t it = 1;; ++it) {
    if (pool.size() == 0) {
      if (stuck == 0) return out.status = BabStatus::Proven, out;
      out.reason = std::to_string(stuck) + " sub-domains with every unstable ReLU split are neither verified nor falsified";
      return out.status = BabStatus::Exhausted, out;
    }
    out.lower = pool.score().min().item<double>();
    if (ctx.expired()) return out.status = BabStatus::Timeout, out;
    if (pool.size() > o.bab.max_domains) {
      out.reason = "more than " + std::to_string(o.bab.max_domains) + " sub-domains";
      return out.status = BabStatus::Exhausted, out;
    }
    auto [f, score] = pool.pop(batch);
    at::Tensor layer = f[lay.layer()], neuron = f[lay.neuron()];
    at::Tensor splittable = at::nonzero(layer >= 0).reshape({-1});
    stuck += layer.size(0) - splittable.numel();
    for (auto& t : f) t = t.index_select(0, splittable);
    layer = layer.index_select(0, splittable), neuron = neuron.index_select(0, splittable);
    const int64_t n = layer.size(0);
    if (n == 0) continue;
    // children [plus(all n); minus(all n)]: each inherits its parent's bounds
    std::vector<at::Tensor> split;
    Scored kids;
    for (size_t j = 0; j < lay.relus; ++j) {
      split.push_back(f[lay.split(j)]);
      kids.d.lower.push_back(f[lay.lower(j)].repeat({2, 1}));
      kids.d.upper.push_back(f[lay.upper(j)].repeat({2, 1}));
    }
    kids.d.split = split_children(split, layer, neuron);
    kids.d.xl = p.xl;
    kids.d.xu = p.xu;
    kids.d.reuse_upto = layer.repeat({2});
    if (f[lay.alpha(0)].dim() == 3) {  // the parent's slopes and multipliers (the new split's beta starts at 0)
      for (size_t j = 0; j < lay.relus; ++j) {
        kids.d.start.alpha.push_back(f[lay.alpha(j)].repeat({2, 1, 1}));
        kids.d.start.beta.push_back(f[lay.beta(j)].repeat({2, 1, 1}));
      }
    }
    if (!bound_and_choose(ctx, relus, p, kids, nullptr)) return out.status = BabStatus::Timeout, out;
    out.visited += 2 * n;
    at::Tensor kid_open = at::nonzero(kids.score <= o.margin).reshape({-1});
    if (try_vertices(ctx, p, kids, kid_open)) return out.status = BabStatus::Falsified, out;
    keep_open(lay, pool, kids, kid_open, inherit, o.bab.inherit_max_bytes);
    if (o.attack.enabled && o.bab.attack_every > 0 && it % o.bab.attack_every == 0 && kid_open.numel() > 0) {
      const int64_t m = std::min<int64_t>(kid_open.numel(), 8);
      at::Tensor sel = kid_open.slice(0, 0, m);
      at::Tensor starts =
          minimising_vertex(kids.g.a_input.index_select(0, sel), kids.rows.index_select(0, sel),
                            p.xl.reshape({1, -1}).expand({m, p.xl.numel()}), p.xu.reshape({1, -1}).expand({m, p.xu.numel()}));
      AttackOptions ao = o.attack;
      ao.seed += static_cast<uint64_t>(it);
      BatchFn fn = [&](const at::Tensor& x) { return ctx.graph.forward(x, at::kDouble); };
      AttackResult r = pgd_attack(fn, p.xl, p.xu, p.c, p.rhs, ao, starts, [&] { return ctx.expired(); });
      if (r.value <= 0 && ctx.confirm(r.x)) return out.status = BabStatus::Falsified, out;
    }
    if (ctx.side_attack && ctx.side_attack()) return out.status = BabStatus::Falsified, out;
    if (Clock::now() - last_report > std::chrono::seconds(1)) {
      if (ctx.progress)
        ctx.progress(Progress{ctx.phase, pool.size(), out.visited,
                              pool.size() ? pool.score().min().item<double>() : o.margin, ctx.elapsed()});
      last_report = Clock::now();
    }
  }
}

}  // namespace tessera::lirpa::detail
