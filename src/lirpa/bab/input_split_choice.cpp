// Input splitting's split choice and the bounding of boxes: see input_split_steps.h. Why
// each guard exists, with the instances that showed it: bench/RESULTS.md ("input splitting:
// tuned options") and bench/history/2026-12-02-input-split-options.md.

#include <ATen/ATen.h>

#include <limits>

#include "lirpa/bab/box_bounds.h"
#include "lirpa/bab/input_split_steps.h"

namespace tessera::lirpa::detail {

at::Tensor relative_widths(const at::Tensor& root_width, const at::Tensor& xl, const at::Tensor& xu) {
  return (xu - xl) / root_width.reshape({1, -1}).clamp_min(1e-300);  // (u_i - l_i) / (U_i - L_i)
}

at::Tensor point_dimensions(const at::Tensor& root_width, const at::Tensor& xl, const at::Tensor& xu,
                            double point_width) {
  return (xu - xl) <= root_width.reshape({1, -1}) * point_width;  // u_i - l_i <= eps (U_i - L_i)
}

at::Tensor thin_dimensions(const at::Tensor& root_width, const at::Tensor& xl, const at::Tensor& xu, double ratio) {
  at::Tensor rel = relative_widths(root_width, xl, xu);
  return rel < std::get<0>(rel.max(1, /*keepdim=*/true)) * ratio;
}

at::Tensor negligible_smear(const at::Tensor& smear, double ratio) {
  return smear < std::get<0>(smear.max(1, /*keepdim=*/true)) * ratio;  // s_i < ratio max_j s_j
}

Bounded Bounded::select(const at::Tensor& idx) const {
  Bounded out{score.index_select(0, idx), rows.index_select(0, idx), a.index_select(0, idx), {}};
  for (size_t k = 0; k < layers.lower.size(); ++k) {
    out.layers.lower.push_back(layers.lower[k].index_select(0, idx));
    out.layers.upper.push_back(layers.upper[k].index_select(0, idx));
  }
  return out;
}

Bounded bound_boxes(const Graph& graph, const std::vector<GraphRelu>& relus, const at::Tensor& xl,
                    const at::Tensor& xu, const BabProblem& p, const LayerBounds* parent) {
  GraphBounded g = bound_box_domains(graph, relus, xl, xu, p.c, p.rhs, parent);
  at::Tensor rows = std::get<0>(best_rows(g.lb));  // the best row drives the split choice
  // a box is verified when max_k g_k > margin on it: the rows' bounds combined
  return {conjunction_lower_bound(g.lb, g.a_input, xl, xu), rows, g.a_input,
          LayerBounds{g.bounds.lower, g.bounds.upper, {}}};
}

void alpha_near_verified(BabContext& ctx, const std::vector<GraphRelu>& relus, const BabProblem& p,
                         const at::Tensor& xl, const at::Tensor& xu, Bounded& b) {
  const VerifyOptions& o = ctx.options;
  if (o.bab.input_alpha_band <= 0 || o.bab.input_alpha_iterations <= 0) return;
  at::Tensor near = at::nonzero(b.score.le(o.margin).logical_and(b.score.gt(o.margin - o.bab.input_alpha_band)))
                        .reshape({-1});
  if (near.numel() == 0) return;
  Bounded s = b.select(near);
  BetaOptions steps;  // the slopes' steps (no split: no multiplier)
  steps.iterations = o.bab.input_alpha_iterations;
  steps.lr_alpha = o.beta.lr_alpha, steps.lr_decay = o.beta.lr_decay;
  at::Tensor score = alpha_conjunction_bound(ctx.graph, relus, xl.index_select(0, near), xu.index_select(0, near),
                                             p.c, p.rhs, s.layers, steps, [&ctx] { return ctx.expired(); });
  b.score.index_copy_(0, near, at::max(s.score, score));
}

at::Tensor open_rows(const Bounded& b, const at::Tensor& open, const at::Tensor& xl, const at::Tensor& xu) {
  at::Tensor ol = xl.index_select(0, open), ou = xu.index_select(0, open);
  at::Tensor a = b.a.index_select(0, open), rows = b.rows.index_select(0, open);
  at::Tensor ar = a.gather(1, rows.view({-1, 1, 1}).expand({a.size(0), 1, a.size(2)})).squeeze(1);
  at::Tensor smear = ar.abs() * (ou - ol);
  smear = at::where((std::get<0>(smear.max(1)) <= 0).unsqueeze(1), ou - ol, smear);
  std::vector<at::Tensor> parts{ol, ou, b.score.index_select(0, open).unsqueeze(1), smear};
  for (const at::Tensor& t : b.layers.lower) parts.push_back(t.index_select(0, open));
  for (const at::Tensor& t : b.layers.upper) parts.push_back(t.index_select(0, open));
  return at::cat(parts, 1);
}

std::tuple<at::Tensor, at::Tensor, Bounded> split_boxes(const Graph& graph, const std::vector<GraphRelu>& relus,
                                                        const BabProblem& p, const at::Tensor& xl,
                                                        const at::Tensor& xu, const at::Tensor& smear,
                                                        const LayerBounds& parent_layers, int64_t candidates,
                                                        const at::Tensor& parent, bool guarded,
                                                        const InputSplitTuning& t) {
  const int64_t bsz = xl.size(0), m = std::min<int64_t>(candidates, xl.size(1));
  at::Tensor root = (p.xu - p.xl).to(at::kDouble);
  at::Tensor thin = thin_dimensions(root, xl, xu, guarded ? t.thin_ratio : 0.0)  // [B, n]
                       .logical_or(point_dimensions(root, xl, xu, t.point_width));
  if (!guarded) thin = thin.logical_or(negligible_smear(smear, t.negligible_smear));
  at::Tensor dims = std::get<1>(smear.masked_fill(thin, -1).topk(m, 1));  // [B, m]: thin ones last
  std::vector<at::Tensor> ls, us;
  for (int64_t j = 0; j < m; ++j) {
    auto [cl, cu] = bisect(xl, xu, dims.select(1, j).contiguous());  // [2B, n]: lower halves, upper halves
    ls.push_back(cl), us.push_back(cu);
  }
  at::Tensor al = at::cat(ls), au = at::cat(us);  // child (j, side, box) at row (2 j + side) B + box
  LayerBounds inherited;  // child (j, side, box) lies inside box
  for (size_t k = 0; k < parent_layers.lower.size(); ++k) {
    inherited.lower.push_back(parent_layers.lower[k].repeat({2 * m, 1}));
    inherited.upper.push_back(parent_layers.upper[k].repeat({2 * m, 1}));
  }
  Bounded all = bound_boxes(graph, relus, al, au, p, &inherited);
  if (m == 1) return {al, au, all};
  at::Tensor worse = std::get<0>(all.score.reshape({m, 2, bsz}).min(1));  // [m, B]
  worse = worse.masked_fill(thin.gather(1, dims).t(), -std::numeric_limits<double>::infinity());
  auto [best_worse, best] = worse.max(0);                                  // [B]
  at::Tensor box = at::arange(bsz, at::kLong);
  if (guarded) {
    // no candidate improves the box's bound: bisect its relatively widest dimension instead
    at::Tensor stalled = best_worse <= parent + t.stall_ratio * parent.abs();
    at::Tensor is_widest = dims == relative_widths(root, xl, xu).argmax(1, /*keepdim=*/true);  // [B, m]
    best = at::where(stalled.logical_and(is_widest.any(1)), is_widest.to(at::kLong).argmax(1), best);
  }
  at::Tensor pick = at::cat({2 * best * bsz + box, (2 * best + 1) * bsz + box});  // lower halves, upper halves
  return {al.index_select(0, pick), au.index_select(0, pick), all.select(pick)};
}

}  // namespace tessera::lirpa::detail
