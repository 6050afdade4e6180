// FSB branching: filter the ReLUs by their BaBSR score, then measure. For each domain the
// `topk` best-scored candidates are split tentatively; every child (2 k per domain, all in
// one batch) gets one backward CROWN pass with the parent's layer bounds, the split
// neuron's bounds clamped to its side (z >= 0: l = max(l, 0); z <= 0: u = min(u, 0)), and
// the parent's slopes and multipliers. The score of a candidate is the bound of its worse
// child, min(lb+, lb-); the best candidate is chosen.

#include <ATen/ATen.h>

#include <limits>

#include "lirpa/bab/bab.h"
#include "lirpa/bab/relu_bab.h"

namespace tessera::lirpa::detail {
namespace {

// Tiles a per-domain tensor [B, ...] `times` times along the first dimension.
at::Tensor tile(const at::Tensor& t, int64_t times) {
  std::vector<int64_t> reps(t.dim(), 1);
  reps[0] = times;
  return t.repeat(reps);
}

}  // namespace

std::pair<at::Tensor, at::Tensor> fsb_choice(const ReluNet& net, const DomainBatch& d, const LayerBounds& bounds,
                                            const FinalBound& fb, const Relaxation& relax, const at::Tensor& rows,
                                            const at::Tensor& c, const at::Tensor& rhs, int topk) {
  at::NoGradGuard no_grad;
  const int64_t bsz = d.size();
  const size_t hidden = bounds.lower.size();
  std::vector<at::Tensor> split = d.split;
  if (split.empty())
    for (const auto& l : bounds.lower) split.push_back(at::zeros(l.sizes(), at::kChar));
  at::Tensor scores = babsr_scores(bounds, fb.lambda, split, rows);
  const int64_t k = std::min<int64_t>(std::max(topk, 1), scores.size(1));
  auto [vals, idx] = scores.topk(k, 1);  // [B, k] candidates, best BaBSR first
  at::Tensor valid = at::isfinite(vals);
  // children of candidate j: rows [2 B j, 2 B (j + 1)), active half first
  std::vector<std::vector<at::Tensor>> kid_split(hidden);
  for (int64_t j = 0; j < k; ++j) {
    auto [layer, neuron] = flat_to_layer(bounds, idx.select(1, j));
    layer = layer.masked_fill(valid.select(1, j).logical_not(), -1);  // no candidate: no split
    std::vector<at::Tensor> kids = split_children(split, layer, neuron);
    for (size_t h = 0; h < hidden; ++h) kid_split[h].push_back(kids[h]);
  }
  DomainBatch kd{tile(d.xl, 2 * k), tile(d.xu, 2 * k), {}};
  LayerBounds kb;
  Relaxation kr;
  for (size_t h = 0; h < hidden; ++h) {
    at::Tensor s = at::cat(kid_split[h]);
    at::Tensor l = tile(bounds.lower[h], 2 * k), u = tile(bounds.upper[h], 2 * k);
    kb.lower.push_back(at::where(s > 0, l.clamp_min(0), l));  // active: z >= 0
    kb.upper.push_back(at::where(s < 0, u.clamp_max(0), u));  // inactive: z <= 0
    kd.split.push_back(s);
    kr.alpha.push_back(h < relax.alpha.size() && relax.alpha[h].defined() ? tile(relax.alpha[h], 2 * k) : at::Tensor());
    kr.beta.push_back(h < relax.beta.size() && relax.beta[h].defined() ? tile(relax.beta[h], 2 * k) : at::Tensor());
  }
  kb.infeasible = tile(bounds.infeasible, 2 * k);
  FinalBound kf = final_bound(net, kd, kb, c, rhs, kr);
  at::Tensor child = std::get<0>(kf.lb.max(1)).reshape({k, 2, bsz});       // best row per child
  at::Tensor worse = std::get<0>(child.min(1)).t();                          // [B, k]: min(lb+, lb-)
  worse = worse.masked_fill(valid.logical_not(), -std::numeric_limits<double>::infinity());
  at::Tensor pick = worse.argmax(1, /*keepdim=*/true);
  auto [layer, neuron] = flat_to_layer(bounds, idx.gather(1, pick).squeeze(1));
  at::Tensor none = valid.select(1, 0).logical_not();  // no unstable unsplit ReLU left
  return {layer.masked_fill(none, -1), neuron.masked_fill(none, -1)};
}

}  // namespace tessera::lirpa::detail
