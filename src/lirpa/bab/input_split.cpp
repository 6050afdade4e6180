// Input-splitting branch and bound: a stack of boxes, processed in large batches (the
// most recently split, worst-bounded boxes first: depth first, so the stack stays small).
// Each box of a batch is bisected along the best of its `bab.input.candidates` (or, in the
// portfolio below, `portfolio_candidates`) largest-smear dimensions (all tried); all children are
// bounded at once on the graph engine (bound_boxes: forward linear bounds and backward CROWN of
// the unstable ReLU inputs, intersected with each other and with the parent box's bounds, which
// every open box keeps for its children); children near verification get alpha-CROWN (alpha_near_verified);
// verified children are dropped; the minimising vertex of every unverified
// child is tried as a counterexample, a few PGD steps run inside the worst children of every
// batch, and PGD on the whole region from the worst boxes' centres now and then. In the
// portfolio phase the portfolio's search replaces the first one and hands its
// lowest-bounded boxes over to ReLU splitting (hand_off). The pool: box_stack.h; the split
// choice and its guards: input_split_choice.cpp; the attacks: input_split_attacks.cpp.

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>
#include <string>

#include "lirpa/bab/input_split_steps.h"

namespace tessera::lirpa::detail {
namespace {

std::vector<int64_t> relu_widths(const std::vector<GraphRelu>& relus) {
  std::vector<int64_t> w;
  for (const GraphRelu& r : relus) w.push_back(r.size);
  return w;
}

void report(BabContext& ctx, int64_t left, int64_t visited, double lower) {
  if (ctx.progress) ctx.progress(Progress{ctx.phase, left, visited, lower, ctx.elapsed()});
}

/// One search of the portfolio: its own stack of open boxes (they cover what it has not
/// proven yet), split candidates, batch size, and the work spent in it.
struct Search {
  Search(int64_t n, const std::vector<int64_t>& widths, int64_t candidates, int64_t batch)
      : pool(n, widths), candidates(candidates), batch(batch) {}
  BoxStack pool;
  int64_t candidates, batch;
  int64_t it = 0;       // batches processed
  double cost = 0;      // work of its batches: children bounded / input.children_per_second
  double handed = 0;    // the part of `cost` spent in hand-offs to ReLU splitting
  double bisected = 0;  // the part of `cost` spent in bisection in the portfolio phase
};

enum class Step { Open, Proven, Falsified };

/// One batch of a search: pop, split, bound, try counterexamples, push the open children.
Step step(BabContext& ctx, const std::vector<GraphRelu>& relus, const BabProblem& p, Search& s, BabOutcome& out,
          bool best_first) {
  const VerifyOptions& o = ctx.options;
  const InputSplitTuning& t = o.bab.input;
  if (s.pool.size() == 0) return Step::Proven;
  auto t0 = Clock::now();
  at::Tensor todo = best_first && s.it % t.best_first_every == 0 ? s.pool.pop_lowest(s.batch) : s.pool.pop(s.batch);
  auto [cl, cu, b] = split_boxes(ctx.graph, relus, p, s.pool.xl(todo), s.pool.xu(todo), s.pool.smear(todo),
                                 s.pool.layers(todo), s.candidates, s.pool.score(todo), s.candidates > t.candidates, t);
  alpha_near_verified(ctx, relus, p, cl, cu, b);
  if (ctx.observe) ctx.observe(cl, cu, b);
  out.visited += cl.size(0);
  ++s.it;
  at::Tensor open = at::nonzero(b.score <= o.margin).reshape({-1});  // not verified yet
  at::Tensor rows = open_rows(b, open, cl, cu);
  at::Tensor vertex = minimising_vertex(b.a.index_select(0, open), b.rows.index_select(0, open),
                                        s.pool.xl(rows), s.pool.xu(rows));
  if (try_points(ctx, p, vertex)) return Step::Falsified;
  if (o.attack.enabled && attack_open(ctx, p, s.pool, rows)) return Step::Falsified;
  s.pool.push(rows);
  if (o.attack.enabled && o.bab.attack_every > 0 && s.it % o.bab.attack_every == 0 && attack_worst(ctx, p, s.pool, s.it))
    return Step::Falsified;
  const int64_t bounded = cl.size(0) * std::min<int64_t>(s.candidates, cl.size(1));  // 2 m children a box
  const double work = static_cast<double>(bounded) / t.children_per_second;
  const double secs = ctx.agreed(std::chrono::duration<double>(Clock::now() - t0).count());
  if (!o.bab.force_synchronous) {
    if ((secs > t.max_batch_seconds || work > t.batch_work_max) && s.batch > 64) s.batch /= 2;
    else if (work < t.batch_work_min && secs <= t.max_batch_seconds && s.batch < 8192) s.batch *= 2;
  }
  s.cost += work;
  if (best_first) s.bisected += work;
  return s.pool.size() == 0 ? Step::Proven : Step::Open;
}

/// One hand-off to ReLU splitting (relu_split_boxes): the search's `hand_off_boxes`
/// lowest-bounded boxes together, with a budget of `hand_off_domains` domains a box. A proven
/// box leaves the pool; the others go back on top of the stack and are bisected next.
Step hand_off(BabContext& ctx, const BabProblem& p, Search& s, BabOutcome& out) {
  const InputSplitTuning& t = ctx.options.bab.input;
  if (s.pool.size() == 0) return Step::Proven;
  at::Tensor rows = s.pool.pop_lowest(t.hand_off_boxes);
  BoxHandOff h = relu_split_boxes(ctx, p, s.pool.xl(rows), s.pool.xu(rows), s.pool.layers(rows),
                                 t.hand_off_domains * rows.size(0));
  out.visited += h.visited;
  const double work = static_cast<double>(h.visited) * t.relu_domain_work / t.children_per_second;
  s.cost += work, s.handed += work;
  if (h.falsified) return Step::Falsified;
  s.pool.push(rows.index_select(0, at::nonzero(h.proven.logical_not()).reshape({-1})));
  return s.pool.size() == 0 ? Step::Proven : Step::Open;
}

}  // namespace

/// The portfolio: the search with `input.candidates` split candidates runs alone until it has
/// cost `bab.input_portfolio_after` "seconds" of work (children bounded /
/// `input.children_per_second`: the same search at any load); then a second search with
/// `input.portfolio_candidates` starts from the root box and the two share the work equally (the
/// one that has cost less runs next) until either empties its pool or finds a counterexample.
/// Each pool covers the whole unproven region on its own, so either finishing decides, and the
/// better of their minima is a lower bound. With hand-offs to ReLU splitting
/// (`bab.input_relu_share` > 0) the portfolio's search replaces the first one instead and hands
/// its lowest-bounded boxes over while the hand-offs have cost at most that share of its
/// bisection work; every `input.best_first_every`-th batch of the portfolio phase takes the
/// lowest-bounded boxes instead of the top of the stack. Why each of these: bench/RESULTS.md
/// ("input splitting: tuned options").
BabOutcome input_split_bab(BabContext& ctx, const BabProblem& p) {
  const VerifyOptions& o = ctx.options;
  const int64_t batch = o.bab.batch_size > 0 ? o.bab.batch_size : 256;
  BabOutcome out;
  at::Tensor xl = p.xl.to(at::kDouble).reshape({1, -1}), xu = p.xu.to(at::kDouble).reshape({1, -1});
  const InputSplitTuning& t = o.bab.input;
  const std::vector<GraphRelu> relus = graph_relus(ctx.graph);
  Bounded root = bound_boxes(ctx.graph, relus, xl, xu, p, nullptr);
  if (ctx.observe) ctx.observe(xl, xu, root);
  const std::vector<int64_t> widths = relu_widths(relus);
  // each open box keeps its layer bounds; the pools stop at input.max_pool_bytes
  const int64_t max_boxes = std::min<int64_t>(o.bab.max_domains, t.max_pool_bytes / BoxStack(xl.size(1), widths).row_bytes());
  out.visited = 1;
  out.lower = root.score.item<double>();
  if (out.lower > o.margin) return out.status = BabStatus::Proven, out;
  if (try_points(ctx, p, at::cat({minimising_vertex(root.a, root.rows, xl, xu), (xl + xu) / 2})))
    return out.status = BabStatus::Falsified, out;
  at::Tensor root_rows = open_rows(root, at::zeros({1}, at::kLong), xl, xu);
  std::vector<Search> searches;
  searches.reserve(2);
  searches.emplace_back(xl.size(1), widths, t.candidates, batch);
  searches.back().pool.push(root_rows);
  auto lower = [&] {
    double l = -std::numeric_limits<double>::infinity();
    for (const Search& s : searches) l = std::max(l, s.pool.min_score());
    return l;
  };
  auto open_boxes = [&] {
    int64_t k = 0;
    for (const Search& s : searches) k += s.pool.size();
    return k;
  };
  bool portfolio = false;  // the five-candidate search has started
  const bool hand_offs = o.bab.input_relu_share > 0;
  auto last_report = Clock::now();
  for (;;) {
    if (ctx.expired()) return out.lower = lower(), out.status = BabStatus::Timeout, out;
    if (ctx.max_visited > 0 && out.visited >= ctx.max_visited) {
      out.lower = lower();
      out.reason = "the budget of " + std::to_string(ctx.max_visited) + " boxes";
      return out.status = BabStatus::Exhausted, out;
    }
    if (open_boxes() > max_boxes) {
      out.lower = lower();
      out.reason = "more than " + std::to_string(max_boxes) + " sub-domains" +
                   (max_boxes < o.bab.max_domains ? " (" + std::to_string(t.max_pool_bytes >> 20) + " MiB of open boxes)" : "");
      return out.status = BabStatus::Exhausted, out;
    }
    if (!portfolio && o.bab.input_portfolio_after >= 0 && searches[0].cost >= o.bab.input_portfolio_after &&
        xl.size(1) > t.candidates) {
      portfolio = true;
      const double spent = searches[0].cost;
      if (hand_offs) searches.clear();  // the five-candidate search with hand-offs runs alone
      searches.emplace_back(xl.size(1), widths, t.portfolio_candidates, batch);
      searches.back().pool.push(root_rows);
      searches.back().cost = spent;  // from now on, equal shares
    }
    Search& s = searches.size() == 1 || searches[0].cost <= searches[1].cost ? searches[0] : searches[1];
    Step r = portfolio && hand_offs && s.candidates == t.portfolio_candidates && s.handed <= o.bab.input_relu_share * s.bisected
                 ? hand_off(ctx, p, s, out)
                 : step(ctx, relus, p, s, out, portfolio);
    if (r == Step::Proven) return out.status = BabStatus::Proven, out;
    if (r == Step::Falsified) return out.status = BabStatus::Falsified, out;
    if (ctx.side_attack && ctx.side_attack()) return out.status = BabStatus::Falsified, out;  // not timed above
    if (Clock::now() - last_report > std::chrono::seconds(1)) {
      report(ctx, open_boxes(), out.visited, lower());
      last_report = Clock::now();
    }
  }
}

}  // namespace tessera::lirpa::detail
