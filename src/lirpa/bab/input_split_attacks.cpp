// Counterexample searches inside input splitting's open boxes: see input_split_steps.h.

#include <ATen/ATen.h>

#include <algorithm>

#include "lirpa/attack/pgd.h"
#include "lirpa/bab/input_split_steps.h"

namespace tessera::lirpa::detail {

bool try_points(BabContext& ctx, const BabProblem& p, const at::Tensor& x) {
  if (x.size(0) == 0) return false;
  at::NoGradGuard no_grad;
  at::Tensor v = conjunction_violation(ctx.forward(x), p.c, p.rhs);
  at::Tensor cand = at::nonzero(v <= 0).reshape({-1});
  for (int64_t i = 0; i < std::min<int64_t>(cand.numel(), 16); ++i)
    if (ctx.confirm(x[cand[i].item<int64_t>()])) return true;
  return false;
}

bool attack_worst(BabContext& ctx, const BabProblem& p, const BoxStack& pool, int64_t batch) {
  if (pool.size() == 0) return false;
  AttackOptions ao = ctx.options.attack;
  ao.seed += static_cast<uint64_t>(batch);
  AttackResult r = pgd_attack(ctx.forward, p.xl, p.xu, p.c, p.rhs, ao, pool.worst_centres(8), [&] { return ctx.expired(); });
  return r.value <= 0 && ctx.confirm(r.x);
}

bool attack_open(BabContext& ctx, const BabProblem& p, const BoxStack& pool, const at::Tensor& rows) {
  if (rows.size(0) == 0) return false;
  const InputSplitTuning& t = ctx.options.bab.input;
  const int64_t m = std::min<int64_t>(t.local_attack_boxes, rows.size(0));
  if (m == 0) return false;
  at::Tensor worst = std::get<1>(pool.score(rows).topk(m, 0, /*largest=*/false));
  at::Tensor wl = pool.xl(rows).index_select(0, worst), wu = pool.xu(rows).index_select(0, worst);
  return try_points(ctx, p, box_attack(ctx.forward, wl, wu, (wl + wu) / 2, p.c, p.rhs, t.local_attack_steps));
}

}  // namespace tessera::lirpa::detail
