// ReLU-splitting branch and bound with beta-CROWN: each domain is the input box plus a set
// of split ReLUs (z >= 0 or z <= 0). A batch of the worst domains is split at the ReLU
// BaBSR or FSB chooses; both children inherit the parent's bounds (intersected with their own),
// slopes and multipliers, and are bounded by alpha/beta optimisation. The two children of
// a split cover the parent (z >= 0 or z <= 0 holds for every input). The search may start
// from several root boxes at once (input splitting's hand-off): every domain keeps the index of
// its root (whose box is its input box), and a root is proven when none of its domains is left open.
//
// With a sharded state (`ctx.state_comm`), each rank bounds one contiguous block of a batch's
// children and the results are all-gathered in the single-process order; every decision is
// then taken on the gathered batch, the same on every rank (relu_split_shard.cpp).

#include <ATen/ATen.h>

#include "lirpa/attack/pgd.h"
#include "lirpa/bab/bab.h"
#include "lirpa/bab/domain_pool.h"
#include "lirpa/bab/relu_bab.h"
#include "tessera/dist/communicator.h"

namespace tessera::lirpa::detail {

std::vector<at::Tensor> split_children(const std::vector<at::Tensor>& split, const at::Tensor& layer,
                                       const at::Tensor& neuron) {
  std::vector<at::Tensor> out;
  for (size_t j = 0; j < split.size(); ++j) {
    at::Tensor hit = layer == static_cast<int64_t>(j);
    at::Tensor idx = at::where(hit, neuron, at::zeros_like(neuron)).clamp_min(0).view({-1, 1});  // in range
    at::Tensor onehot = at::zeros_like(split[j], at::kBool).scatter_(1, idx, true);
    onehot = onehot.logical_and(hit.unsqueeze(1));
    at::Tensor plus = at::where(onehot, at::ones_like(split[j]), split[j]);    // z >= 0
    at::Tensor minus = at::where(onehot, -at::ones_like(split[j]), split[j]);  // z <= 0
    out.push_back(at::cat({plus, minus}));
  }
  return out;
}

namespace {

struct Bounded {
  DomainBatch d;
  LayerBounds bounds;
  Relaxation relax;
  FinalBound fb;
  at::Tensor rows, score, layer, neuron;
};

// `block`: this rank's block of a batch split across ranks (null: the whole batch);
// `beta_layers`: the layers where the whole batch has splits (empty: decided on `d`).
Bounded bound_domains(BabContext& ctx, const BabProblem& p, DomainBatch d, const LayerBounds* parent,
                      Relaxation relax, int iterations, const ChildBlock* block = nullptr,
                      std::vector<bool> beta_layers = {}) {
  Bounded b{std::move(d), {}, std::move(relax), {}, {}, {}, {}, {}};
  b.bounds = intermediate_bounds(ctx.net, b.d, parent);
  OptimiseOptions oo{iterations, ctx.options.beta.lr_alpha, ctx.options.beta.lr_beta, ctx.options.beta.lr_decay, true,
                     [&ctx] { return ctx.expired(); }, {}, std::move(beta_layers)};
  if (block && block->split())  // stop where the whole batch would
    oo.all_verified = [&ctx, block](bool local) { return on_every_rank(*ctx.state_comm, *block, local); };
  b.fb = optimise_final_bound(ctx.net, b.d, b.bounds, p.c, p.rhs, b.relax, oo);
  at::NoGradGuard no_grad;
  std::tie(b.rows, b.score) = best_rows(b.fb.lb);
  std::vector<at::Tensor> split = b.d.split;
  if (split.empty())
    for (auto& l : b.bounds.lower) split.push_back(at::zeros(l.sizes(), at::kChar));
  if (ctx.options.bab.branching == ReluBranching::FSB) {
    DomainBatch with_split{b.d.xl, b.d.xu, split};
    std::tie(b.layer, b.neuron) = fsb_choice(ctx.net, with_split, b.bounds, b.fb, b.relax, b.rows, p.c, p.rhs,
                                             ctx.options.bab.fsb_topk);
  } else {
    std::tie(b.layer, b.neuron) = babsr_choice(b.bounds, b.fb.lambda, split, b.rows);
  }
  return b;
}

bool try_vertices(BabContext& ctx, const BabProblem& p, const Bounded& b, const at::Tensor& open) {
  at::NoGradGuard no_grad;
  at::Tensor x = minimising_vertex(b.fb.a_input.index_select(0, open), b.rows.index_select(0, open),
                                   b.d.xl.index_select(0, open), b.d.xu.index_select(0, open));
  if (x.size(0) == 0) return false;
  at::Tensor v = conjunction_violation(ctx.net.forward(x), p.c, p.rhs);
  at::Tensor cand = at::nonzero(v <= 0).reshape({-1});
  for (int64_t i = 0; i < std::min<int64_t>(cand.numel(), 16); ++i)
    if (ctx.confirm(x[cand[i].item<int64_t>()])) return true;
  return false;
}

// The whole batch on every rank from each rank's block `b` (children `split`: all of them).
Bounded gather_children(BabContext& ctx, const ChildBlock& block, Bounded b, std::vector<at::Tensor> split,
                        const at::Tensor& xl, const at::Tensor& xu) {
  dist::Communicator& comm = *ctx.state_comm;
  auto all = [&](const at::Tensor& t) { return gather_block(comm, block, t); };
  Bounded g{DomainBatch{xl, xu, std::move(split)}, {}, {}, {}, {}, {}, {}, {}};  // every child's box
  for (size_t j = 0; j < b.bounds.lower.size(); ++j) {
    g.bounds.lower.push_back(all(b.bounds.lower[j]));
    g.bounds.upper.push_back(all(b.bounds.upper[j]));
    g.relax.alpha.push_back(all(b.relax.alpha[j]));
    g.relax.beta.push_back(all(b.relax.beta[j]));  // defined on every rank or on none (beta_layers)
  }
  g.fb.lb = all(b.fb.lb);
  g.fb.a_input = all(b.fb.a_input);
  g.layer = all(b.layer);
  g.neuron = all(b.neuron);
  std::tie(g.rows, g.score) = best_rows(g.fb.lb);  // row-wise: the values of each block
  return g;
}

// Moves the unverified domains of `b` (in root boxes `root` [B]) into the pool.
void keep_open(const ReluPoolLayout& lay, TensorPool& pool, const Bounded& b, const at::Tensor& root, const at::Tensor& open) {
  std::vector<at::Tensor> f(lay.root() + 1);
  for (size_t j = 0; j < lay.relus; ++j) {
    at::Tensor s = b.d.split.empty() ? at::zeros(b.bounds.lower[j].sizes(), at::kChar) : b.d.split[j];
    f[lay.split(j)] = s.index_select(0, open);
    f[lay.lower(j)] = b.bounds.lower[j].index_select(0, open);
    f[lay.upper(j)] = b.bounds.upper[j].index_select(0, open);
    f[lay.alpha(j)] = b.relax.alpha[j].index_select(0, open);
    at::Tensor beta = b.relax.beta[j].defined() ? b.relax.beta[j] : at::zeros_like(b.relax.alpha[j]);
    f[lay.beta(j)] = beta.index_select(0, open);
  }
  f[lay.layer()] = b.layer.index_select(0, open);
  f[lay.neuron()] = b.neuron.index_select(0, open);
  f[lay.root()] = root.index_select(0, open);
  pool.push(f, b.score.index_select(0, open));
}

}  // namespace

BabOutcome relu_split_bab(BabContext& ctx, const BabProblem& p, const ReluSplitStart& start) {
  const VerifyOptions& o = ctx.options;
  int64_t batch = o.bab.batch_size > 0 ? o.bab.batch_size : 64;
  ReluPoolLayout lay{static_cast<size_t>(ctx.net.layers() - 1)};
  BabOutcome out;
  at::Tensor xl = start.xl.defined() ? start.xl : p.xl.reshape({1, -1});  // the root boxes [R, n]
  at::Tensor xu = start.xu.defined() ? start.xu : p.xu.reshape({1, -1});
  const int64_t roots = xl.size(0);
  Bounded root = bound_domains(ctx, p, DomainBatch{xl, xu, {}}, start.layers, {}, o.alpha.iterations);
  out.visited = roots;
  out.lower = root.score.min().item<double>();
  at::Tensor open = at::nonzero(root.score <= o.margin).reshape({-1});
  at::Tensor unsettled = at::zeros({roots}, at::kBool);  // roots with a stuck domain
  // a root is proven when none of its domains is open or stuck
  auto settle = [&](const TensorPool& pool) {
    at::Tensor left = unsettled.clone();
    if (pool.size() > 0) left.index_fill_(0, pool.fields()[lay.root()], true);
    out.proven_roots = left.logical_not();
  };
  at::Tensor ids = at::arange(roots, at::kLong);
  if (open.numel() == 0) return out.proven_roots = at::ones({roots}, at::kBool), out.status = BabStatus::Proven, out;
  if (try_vertices(ctx, p, root, open)) return out.status = BabStatus::Falsified, out;
  TensorPool pool;
  int64_t stuck = 0;  // unverified domains with nothing left to split
  keep_open(lay, pool, root, ids, open);
  auto last_report = Clock::now();
  for (int64_t it = 1;; ++it) {
    if (pool.size() == 0) {
      settle(pool);
      if (stuck == 0) return out.status = BabStatus::Proven, out;
      out.reason = std::to_string(stuck) + " sub-domains with every ReLU split are neither verified nor falsified";
      return out.status = BabStatus::Exhausted, out;
    }
    out.lower = pool.score().min().item<double>();
    if (ctx.expired()) return settle(pool), out.status = BabStatus::Timeout, out;
    if (pool.size() > o.bab.max_domains) {
      out.reason = "more than " + std::to_string(o.bab.max_domains) + " sub-domains";
      return settle(pool), out.status = BabStatus::Exhausted, out;
    }
    if (start.max_visited > 0 && out.visited >= start.max_visited) {
      out.reason = std::to_string(out.visited) + " sub-domains bounded (the budget)";
      return settle(pool), out.status = BabStatus::Exhausted, out;
    }
    auto [f, score] = pool.pop(batch);
    at::Tensor layer = f[lay.layer()], neuron = f[lay.neuron()];
    at::Tensor splittable = at::nonzero(layer >= 0).reshape({-1});
    stuck += layer.size(0) - splittable.numel();
    unsettled.index_fill_(0, f[lay.root()].index_select(0, at::nonzero(layer < 0).reshape({-1})), true);
    for (auto& t : f) t = t.index_select(0, splittable);
    layer = layer.index_select(0, splittable), neuron = neuron.index_select(0, splittable);
    int64_t n = layer.size(0);
    if (n == 0) continue;
    // children [plus(all n); minus(all n)]; this rank bounds [lo, hi) of them
    ChildBlock block = child_block(ctx.state_comm.get(), 2 * n);
    at::Tensor of = at::arange(block.lo, block.hi, at::kLong).remainder(n);  // each child's parent
    std::vector<at::Tensor> split;
    LayerBounds parent;
    Relaxation relax;
    for (size_t j = 0; j < lay.relus; ++j) {
      split.push_back(f[lay.split(j)]);
      parent.lower.push_back(f[lay.lower(j)].index_select(0, of));
      parent.upper.push_back(f[lay.upper(j)].index_select(0, of));
      relax.alpha.push_back(f[lay.alpha(j)].index_select(0, of));  // inherited slopes
      relax.beta.push_back(f[lay.beta(j)].index_select(0, of));
    }
    std::vector<at::Tensor> kids = split_children(split, layer, neuron), mine;
    for (const at::Tensor& s : kids) mine.push_back(s.slice(0, block.lo, block.hi));
    at::Tensor kid_root = f[lay.root()].repeat({2});  // a child keeps its root's box
    at::Tensor kid_xl = roots == 1 ? xl.expand({2 * n, xl.size(1)}) : xl.index_select(0, kid_root);
    at::Tensor kid_xu = roots == 1 ? xu.expand({2 * n, xu.size(1)}) : xu.index_select(0, kid_root);
    DomainBatch d{kid_xl.slice(0, block.lo, block.hi), kid_xu.slice(0, block.lo, block.hi), std::move(mine)};
    Bounded b = bound_domains(ctx, p, std::move(d), &parent, std::move(relax), o.beta.iterations, &block,
                              layers_with_splits(kids));
    if (block.split()) b = gather_children(ctx, block, std::move(b), std::move(kids), kid_xl, kid_xu);
    out.visited += 2 * n;
    at::Tensor open = at::nonzero(b.score <= o.margin).reshape({-1});
    if (try_vertices(ctx, p, b, open)) return out.status = BabStatus::Falsified, out;
    keep_open(lay, pool, b, kid_root, open);
    if (o.attack.enabled && o.bab.attack_every > 0 && it % o.bab.attack_every == 0 && open.numel() > 0) {
      at::Tensor starts = minimising_vertex(b.fb.a_input.index_select(0, open), b.rows.index_select(0, open),
                                            b.d.xl.index_select(0, open), b.d.xu.index_select(0, open));
      AttackOptions ao = o.attack;
      ao.seed += static_cast<uint64_t>(it);
      BatchFn fn = [&](const at::Tensor& x) { return ctx.net.forward(x); };
      AttackResult r = pgd_attack(fn, p.xl, p.xu, p.c, p.rhs, ao, starts.slice(0, 0, 8), [&] { return ctx.expired(); });
      if (r.value <= 0 && ctx.confirm(r.x)) return out.status = BabStatus::Falsified, out;
    }
    if (Clock::now() - last_report > std::chrono::seconds(1)) {
      if (ctx.progress)
        ctx.progress(Progress{ctx.phase, pool.size(), out.visited,
                              pool.size() ? pool.score().min().item<double>() : o.margin, ctx.elapsed()});
      last_report = Clock::now();
    }
  }
}

}  // namespace tessera::lirpa::detail
