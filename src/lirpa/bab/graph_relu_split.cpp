// ReLU-splitting branch and bound on the graph engine: a domain pool, BaBSR or FSB, children
// that inherit their parent's bounds, slopes, multipliers and root box, vertex checks,
// periodic PGD, with each domain bounded by the graph engine's CROWN under BoundState limits
// and split multipliers (graph_domains.cpp). From one box or from several (input splitting's
// hand-off, within a budget of domains).

#include <ATen/ATen.h>

#include <functional>
#include <limits>
#include <optional>

#include "lirpa/attack/pgd.h"
#include "lirpa/bab/domain_pool.h"
#include "lirpa/bab/graph_bab.h"
#include "lirpa/bab/relu_bab.h"
#include "tessera/core/error.h"

namespace tessera::lirpa::detail {

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
  if (ctx.observe) ctx.observe(s.d, s.g);
  std::tie(s.rows, s.score) = best_rows(s.g.lb, p.group);
  if (ctx.options.bab.branching == ReluBranching::FSB) {
    std::tie(s.layer, s.neuron) = graph_fsb_choice(ctx.graph, relus, s.d, s.g, s.rows, p.c, p.rhs,
                                                   ctx.options.bab.fsb_topk, [&ctx] { return ctx.expired(); });
    if (!s.layer.defined()) return false;
  } else
    std::tie(s.layer, s.neuron) = babsr_choice(s.g.bounds, s.g.lambda, s.d.split, s.rows);
  return true;
}

bool try_vertices(GraphBabContext& ctx, const BabProblem& p, const Scored& s, const at::Tensor& open) {
  at::NoGradGuard no_grad;
  if (open.numel() == 0) return false;
  auto [xl, xu] = s.d.boxes(open);
  at::Tensor x = minimising_vertex(s.g.a_input.index_select(0, open), s.rows.index_select(0, open), xl, xu);
  at::Tensor y = ctx.graph.forward(x, at::kDouble);
  at::Tensor v = best_rows(at::matmul(y, p.c.t()) - p.rhs, p.group).second;  // <= 0: some disjunct holds at x
  at::Tensor cand = at::nonzero(v <= 0).reshape({-1});
  for (int64_t i = 0; i < std::min<int64_t>(cand.numel(), 16); ++i)
    if (ctx.confirm(x[cand[i].item<int64_t>()])) return true;
  return false;
}

// Moves the open domains of `s` into the pool (ReluPoolLayout; slopes and multipliers as
// float32 [B, K, n_j], or [B, 0] once dropped), with them while
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
  std::vector<at::Tensor> f(lay.rows_lb() + 1);
  for (size_t j = 0; j < lay.relus; ++j) {
    f[lay.split(j)] = s.d.split[j].index_select(0, open);
    f[lay.lower(j)] = s.g.bounds.lower[j].index_select(0, open);
    f[lay.upper(j)] = s.g.bounds.upper[j].index_select(0, open);
    f[lay.alpha(j)] = inherit ? kept.alpha[j].to(at::kFloat) : at::empty({open.numel(), 0}, at::kFloat);
    f[lay.beta(j)] = inherit ? kept.beta[j].to(at::kFloat) : at::empty({open.numel(), 0}, at::kFloat);
  }
  f[lay.layer()] = s.layer.index_select(0, open);
  f[lay.neuron()] = s.neuron.index_select(0, open);
  f[lay.root()] = s.d.root.index_select(0, open);
  f[lay.rows_lb()] = s.g.lb.index_select(0, open);
  pool.push(f, s.score.index_select(0, open));
}

// True when `layers` holds one [R, n_j] bound per ReLU node of `relus` (input splitting's
// boxes carry them), so the roots can start from them.
bool covers_relus(const LayerBounds* layers, const std::vector<GraphRelu>& relus, int64_t roots) {
  if (!layers || layers->lower.size() != relus.size()) return false;
  for (size_t j = 0; j < relus.size(); ++j)
    if (layers->lower[j].sizes() != at::IntArrayRef{roots, relus[j].size}) return false;
  return true;
}

// The root domains: the start's boxes from their given bounds, or the problem's box from the
// incomplete stage's intermediate bounds when they cover every ReLU node's input (its slopes
// are not handed over: the roots optimise their own), else from nothing. The incomplete
// stage's bounds of every node limit all domains of the problem's box (GraphDomains::root_limits).
GraphDomains root_domains(const GraphBabContext& ctx, const std::vector<GraphRelu>& relus, const BabProblem& p,
                          const ReluSplitStart& start) {
  GraphDomains d;
  d.xl = start.xl.defined() ? start.xl : p.xl.reshape({1, -1});  // [R, n]
  d.xu = start.xu.defined() ? start.xu : p.xu.reshape({1, -1});
  const int64_t roots = d.xl.size(0);
  d.root = at::arange(roots, at::kLong);
  d.row_group = p.group;
  for (const GraphRelu& r : relus) d.split.push_back(at::zeros({roots, r.size}, at::kChar));
  const bool given = covers_relus(start.layers, relus, roots);
  TESSERA_CHECK(given || !start.layers, InvalidInput, "ReLU splitting: the root boxes' bounds do not match the graph's ReLU nodes");
  bool seeded = !start.xl.defined() && ctx.root_intermediate != nullptr;
  if (seeded) d.root_limits = std::make_shared<const std::map<int, Interval>>(*ctx.root_intermediate);
  if (!start.xl.defined() && ctx.root_alpha) d.alpha_start = std::make_shared<const std::map<int, at::Tensor>>(*ctx.root_alpha);
  for (const GraphRelu& r : relus) seeded = seeded && ctx.root_intermediate->count(r.input) > 0;
  if (!given && !seeded) return d;
  for (size_t j = 0; j < relus.size(); ++j) {
    const GraphRelu& r = relus[j];
    at::Tensor l = given ? start.layers->lower[j] : ctx.root_intermediate->at(r.input).lower;
    at::Tensor u = given ? start.layers->upper[j] : ctx.root_intermediate->at(r.input).upper;
    d.lower.push_back(l.to(at::kDouble).reshape({roots, r.size}));
    d.upper.push_back(u.to(at::kDouble).reshape({roots, r.size}));
  }
  d.reuse_upto = at::full({roots}, static_cast<int64_t>(relus.size()) - 1, at::kLong);
  return d;
}

}  // namespace

BabOutcome graph_relu_split_bab(GraphBabContext& ctx, const BabProblem& p, const ReluSplitStart& start) {
  const VerifyOptions& o = ctx.options;
  const int64_t batch = o.bab.batch_size > 0 ? o.bab.batch_size : 64;  // BabOptions: 64 for ReLU splitting
  const std::vector<GraphRelu> relus = graph_relus(ctx.graph);
  ReluPoolLayout lay{relus.size()};
  BabOutcome out;
  if (relus.empty()) {  // sigmoid or tanh only: nothing to split, the incomplete stage's bounds stand
    out.reason = "the network has no ReLU to split (branch and bound splits ReLUs only)";
    return out.status = BabStatus::Exhausted, out;
  }
  // the roots by CROWN with their slopes optimised (beta's pass without splits); the children
  // by CROWN and beta from their parent's slopes and multipliers
  Scored root;
  root.d = root_domains(ctx, relus, p, start);
  const int64_t roots = root.d.size();
  if (!bound_and_choose(ctx, relus, p, root, nullptr)) return out.status = BabStatus::Timeout, out;
  out.visited = roots;
  out.lower = root.score.min().item<double>();
  at::Tensor unsettled = at::zeros({roots}, at::kBool);  // roots with a stuck domain
  TensorPool pool;
  // a root is proven when none of its domains is open or stuck
  auto settle = [&] {
    at::Tensor left = unsettled.clone();
    if (pool.size() > 0) left.index_fill_(0, pool.fields()[lay.root()], true);
    out.proven_roots = left.logical_not();
  };
  at::Tensor open = at::nonzero(root.score <= o.margin).reshape({-1});
  if (open.numel() == 0) return settle(), out.status = BabStatus::Proven, out;
  if (try_vertices(ctx, p, root, open)) return out.status = BabStatus::Falsified, out;
  int64_t stuck = 0;  // unverified domains with nothing left to split
  bool& inherit = out.inherited;  // children start from their parent's slopes and multipliers
  keep_open(lay, pool, root, open, inherit, o.bab.inherit_max_bytes);
  auto last_report = Clock::now();
  for (int64_t it = 1;; ++it) {
    if (pool.size() == 0) {
      settle();
      if (stuck == 0) return out.status = BabStatus::Proven, out;
      out.reason = std::to_string(stuck) + " sub-domains with every unstable ReLU split are neither verified nor falsified";
      return out.status = BabStatus::Exhausted, out;
    }
    out.lower = pool.score().min().item<double>();
    if (ctx.expired()) return settle(), out.status = BabStatus::Timeout, out;
    if (pool.size() > o.bab.max_domains) {
      out.reason = "more than " + std::to_string(o.bab.max_domains) + " sub-domains";
      return settle(), out.status = BabStatus::Exhausted, out;
    }
    if (start.max_visited > 0 && out.visited >= start.max_visited) {
      out.reason = std::to_string(out.visited) + " sub-domains bounded (the budget)";
      return settle(), out.status = BabStatus::Exhausted, out;
    }
    auto [f, score] = pool.pop(batch);
    at::Tensor layer = f[lay.layer()], neuron = f[lay.neuron()];
    at::Tensor splittable = at::nonzero(layer >= 0).reshape({-1});
    stuck += layer.size(0) - splittable.numel();
    unsettled.index_fill_(0, f[lay.root()].index_select(0, at::nonzero(layer < 0).reshape({-1})), true);
    for (auto& t : f) t = t.index_select(0, splittable);
    layer = layer.index_select(0, splittable), neuron = neuron.index_select(0, splittable);
    const int64_t n = layer.size(0);
    if (n == 0) continue;
    // children [plus(all n); minus(all n)]: each inherits its parent's bounds and root box
    std::vector<at::Tensor> split;
    Scored kids;
    for (size_t j = 0; j < lay.relus; ++j) {
      split.push_back(f[lay.split(j)]);
      kids.d.lower.push_back(f[lay.lower(j)].repeat({2, 1}));
      kids.d.upper.push_back(f[lay.upper(j)].repeat({2, 1}));
    }
    kids.d.split = split_children(split, layer, neuron);
    kids.d.xl = root.d.xl;
    kids.d.xu = root.d.xu;
    kids.d.root_limits = root.d.root_limits;
    kids.d.alpha_start = root.d.alpha_start;
    kids.d.row_group = root.d.row_group;
    kids.d.root = f[lay.root()].repeat({2});
    kids.d.lb_floor = f[lay.rows_lb()].repeat({2, 1});
    kids.d.reuse_upto = layer.repeat({2});
    if (f[lay.alpha(0)].dim() == 3) {  // the parent's slopes and multipliers (the new split's beta starts at 0)
      for (size_t j = 0; j < lay.relus; ++j) {
        kids.d.start.alpha.push_back(f[lay.alpha(j)].repeat({2, 1, 1}));
        kids.d.start.beta.push_back(f[lay.beta(j)].repeat({2, 1, 1}));
      }
    }
    if (!bound_and_choose(ctx, relus, p, kids, nullptr)) return settle(), out.status = BabStatus::Timeout, out;
    out.visited += 2 * n;
    at::Tensor kid_open = at::nonzero(kids.score <= o.margin).reshape({-1});
    if (try_vertices(ctx, p, kids, kid_open)) return out.status = BabStatus::Falsified, out;
    keep_open(lay, pool, kids, kid_open, inherit, o.bab.inherit_max_bytes);
    if (o.attack.enabled && o.bab.attack_every > 0 && it % o.bab.attack_every == 0 && kid_open.numel() > 0) {
      at::Tensor sel = kid_open.slice(0, 0, std::min<int64_t>(kid_open.numel(), 8));
      auto [box_l, box_u] = kids.d.boxes(sel);
      at::Tensor starts = minimising_vertex(kids.g.a_input.index_select(0, sel), kids.rows.index_select(0, sel), box_l, box_u);
      AttackOptions ao = o.attack;
      ao.seed += static_cast<uint64_t>(it);
      BatchFn fn = [&](const at::Tensor& x) { return ctx.graph.forward(x, at::kDouble); };
      // the conjunction of the worst domain's deciding row (its disjunct's rows)
      at::Tensor rows = p.group.defined() ? at::nonzero(p.group == p.group[kids.rows[sel[0]]]).reshape({-1})
                                          : at::arange(p.c.size(0), at::kLong);
      AttackResult r = pgd_attack(fn, p.xl, p.xu, p.c.index_select(0, rows), p.rhs.index_select(0, rows), ao, starts,
                                  [&] { return ctx.expired(); });
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
