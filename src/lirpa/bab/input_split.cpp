// Input-splitting branch and bound: a pool of boxes, processed in batches (the boxes with
// the lowest bound first), each bisected along its smear dimension; the children are
// bounded by batched CROWN; verified children leave the pool; the minimising vertex of
// every unverified child is tried as a counterexample, and PGD runs now and then.

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>

#include "lirpa/attack/pgd.h"
#include "lirpa/bab/bab.h"

namespace tessera::lirpa::detail {
namespace {

struct BoxPool {
  at::Tensor xl, xu, score, dim;  // [N, n], [N, n], [N], [N]
  int64_t size() const { return score.defined() ? score.size(0) : 0; }

  void push(const at::Tensor& l, const at::Tensor& u, const at::Tensor& s, const at::Tensor& d) {
    if (l.size(0) == 0) return;
    if (size() == 0) {
      xl = l, xu = u, score = s, dim = d;
      return;
    }
    xl = at::cat({xl, l}), xu = at::cat({xu, u}), score = at::cat({score, s}), dim = at::cat({dim, d});
  }

  // Removes and returns the `b` boxes with the lowest scores.
  BoxPool pop(int64_t b) {
    b = std::min(b, size());
    at::Tensor take = std::get<1>(score.topk(b, 0, /*largest=*/false, /*sorted=*/true));
    at::Tensor keep = at::ones({size()}, at::kBool).index_fill_(0, take, false);
    at::Tensor rest = at::nonzero(keep).reshape({-1});
    BoxPool out{xl.index_select(0, take), xu.index_select(0, take), score.index_select(0, take),
                dim.index_select(0, take)};
    xl = xl.index_select(0, rest), xu = xu.index_select(0, rest);
    score = score.index_select(0, rest), dim = dim.index_select(0, rest);
    return out;
  }
};

struct Bounded {
  at::Tensor score, rows, a;  // [B], [B], [B, K, n]
};

Bounded bound_boxes(const ReluNet& net, const at::Tensor& xl, const at::Tensor& xu, const BabProblem& p) {
  at::NoGradGuard no_grad;
  DomainBatch d{xl, xu, {}};
  LayerBounds lb = intermediate_bounds(net, d);
  FinalBound fb = final_bound(net, d, lb, p.c, p.rhs);
  auto [rows, score] = best_rows(fb.lb);  // a box is verified when some row's bound > margin
  return {score, rows, fb.a_input};
}

// Tries points as counterexamples: cheap violation on the ReluNet, confirmation on the graph.
bool try_points(BabContext& ctx, const BabProblem& p, const at::Tensor& x) {
  if (x.size(0) == 0) return false;
  at::NoGradGuard no_grad;
  at::Tensor v = conjunction_violation(ctx.net.forward(x), p.c, p.rhs);
  at::Tensor cand = at::nonzero(v <= 0).reshape({-1});
  for (int64_t i = 0; i < std::min<int64_t>(cand.numel(), 16); ++i)
    if (ctx.confirm(x[cand[i].item<int64_t>()])) return true;
  return false;
}

bool attack_worst(BabContext& ctx, const BabProblem& p, const BoxPool& pool, int64_t batch) {
  if (pool.size() == 0) return false;
  int64_t m = std::min<int64_t>(pool.size(), 8);
  at::Tensor worst = std::get<1>(pool.score.topk(m, 0, false));
  at::Tensor starts = (pool.xl.index_select(0, worst) + pool.xu.index_select(0, worst)) / 2;
  AttackOptions ao = ctx.options.attack;
  ao.seed += static_cast<uint64_t>(batch);
  BatchFn f = [&](const at::Tensor& x) { return ctx.net.forward(x); };
  AttackResult r = pgd_attack(f, p.xl, p.xu, p.c, p.rhs, ao, starts, [&] { return ctx.expired(); });
  return r.value <= 0 && ctx.confirm(r.x);
}

void report(BabContext& ctx, int64_t left, int64_t visited, double lower) {
  if (ctx.progress) ctx.progress(Progress{ctx.phase, left, visited, lower, ctx.elapsed()});
}

}  // namespace

BabOutcome input_split_bab(BabContext& ctx, const BabProblem& p) {
  const VerifyOptions& o = ctx.options;
  const double margin = o.margin;
  int64_t batch = o.bab.batch_size > 0 ? o.bab.batch_size : 1024;
  BabOutcome out;
  at::Tensor xl = p.xl.to(at::kDouble).reshape({1, -1}), xu = p.xu.to(at::kDouble).reshape({1, -1});
  Bounded root = bound_boxes(ctx.net, xl, xu, p);
  out.visited = 1;
  out.lower = root.score.item<double>();
  if (out.lower > margin) return out.status = BabStatus::Proven, out;
  if (try_points(ctx, p, at::cat({minimising_vertex(root.a, root.rows, xl, xu), (xl + xu) / 2})))
    return out.status = BabStatus::Falsified, out;
  BoxPool pool;
  pool.push(xl, xu, root.score, smear_dimension(root.a, root.rows, xl, xu));
  auto last_report = Clock::now();
  for (int64_t it = 1;; ++it) {
    if (pool.size() == 0) return out.status = BabStatus::Proven, out;
    out.lower = pool.score.min().item<double>();
    if (ctx.expired()) return out.status = BabStatus::Timeout, out;
    if (pool.size() > o.bab.max_domains) {
      out.reason = "more than " + std::to_string(o.bab.max_domains) + " sub-domains";
      return out.status = BabStatus::Exhausted, out;
    }
    auto t0 = Clock::now();
    BoxPool todo = pool.pop(batch);
    auto [cl, cu] = bisect(todo.xl, todo.xu, todo.dim);  // children cover each parent box
    Bounded b = bound_boxes(ctx.net, cl, cu, p);
    out.visited += cl.size(0);
    at::Tensor open = at::nonzero(b.score <= margin).reshape({-1});  // not verified yet
    at::Tensor ol = cl.index_select(0, open), ou = cu.index_select(0, open);
    at::Tensor a = b.a.index_select(0, open), rows = b.rows.index_select(0, open);
    if (try_points(ctx, p, minimising_vertex(a, rows, ol, ou))) return out.status = BabStatus::Falsified, out;
    pool.push(ol, ou, b.score.index_select(0, open), smear_dimension(a, rows, ol, ou));
    if (o.attack.enabled && o.bab.attack_every > 0 && it % o.bab.attack_every == 0 && attack_worst(ctx, p, pool, it))
      return out.status = BabStatus::Falsified, out;
    double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    if (!o.bab.force_synchronous) {  // keep a batch between ~0.1 and ~0.5 s
      if (secs < 0.1 && batch < 65536) batch *= 2;
      if (secs > 0.5 && batch > 64) batch /= 2;
    }
    if (Clock::now() - last_report > std::chrono::seconds(1)) {
      report(ctx, pool.size(), out.visited, pool.size() ? pool.score.min().item<double>() : margin);
      last_report = Clock::now();
    }
  }
}

}  // namespace tessera::lirpa::detail
