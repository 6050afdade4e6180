// FSB branching on the graph engine: filter the ReLU neurons of every graph ReLU node by
// their BaBSR score, then measure. For each domain the `topk` best-scored candidates are
// split tentatively; the two children of every domain's j-th candidate are bounded in one
// batch of the graph engine (k batches, `stop` asked before each) with all of their parent's
// ReLU-input bounds taken as they are (only the final CROWN pass runs) and the split neuron's
// bounds clamped to its side (z >= 0: l = max(l, 0); z <= 0: u = min(u, 0)). A candidate's
// score is its worse child's bound, min(lb+, lb-); the best candidate is chosen.

#include <ATen/ATen.h>

#include <limits>

#include "lirpa/bab/graph_bab.h"
#include "lirpa/bab/relu_bab.h"

namespace tessera::lirpa::detail {

std::pair<at::Tensor, at::Tensor> graph_fsb_choice(const Graph& graph, const std::vector<GraphRelu>& relus,
                                                  const GraphDomains& d, const GraphBounded& g, const at::Tensor& rows,
                                                  const at::Tensor& c, const at::Tensor& rhs, int topk,
                                                  const std::function<bool()>& stop) {
  at::NoGradGuard no_grad;
  const int64_t bsz = d.size();
  at::Tensor scores = babsr_scores(g.bounds, g.lambda, d.split, rows);  // [B, sum n_j]
  const int64_t k = std::min<int64_t>(std::max(topk, 1), scores.size(1));
  auto [vals, idx] = scores.topk(k, 1);  // [B, k] candidates, best BaBSR first
  at::Tensor valid = at::isfinite(vals);
  // the children of candidate j (active half first), one batch per candidate
  GraphDomains kids;
  kids.xl = d.xl;
  kids.xu = d.xu;
  kids.root_limits = d.root_limits;
  kids.alpha_start = d.alpha_start;
  kids.row_group = d.row_group;
  if (d.root.defined()) kids.root = d.root.repeat({2});
  for (size_t h = 0; h < relus.size(); ++h) {
    kids.lower.push_back(g.bounds.lower[h].repeat({2, 1}));  // clamped by the split when bounded
    kids.upper.push_back(g.bounds.upper[h].repeat({2, 1}));
  }
  kids.reuse_upto = at::full({2 * bsz}, static_cast<int64_t>(relus.size()) - 1, at::kLong);  // every layer kept
  std::vector<at::Tensor> worse_of;  // [B] per candidate: min(lb+, lb-)
  for (int64_t j = 0; j < k; ++j) {
    auto [layer, neuron] = flat_to_layer(g.bounds, idx.select(1, j));
    layer = layer.masked_fill(valid.select(1, j).logical_not(), -1);  // no candidate: no split
    kids.split = split_children(d.split, layer, neuron);
    GraphBounded kb = bound_graph_domains(graph, relus, kids, c, rhs, nullptr, nullptr, stop);
    if (kb.bounded < kids.size()) return {};  // the run expired on the way
    worse_of.push_back(std::get<0>(best_rows(kb.lb, d.row_group).second.view({2, bsz}).min(0)));
  }
  at::Tensor worse = at::stack(worse_of, 1);  // [B, k]
  worse = worse.masked_fill(valid.logical_not(), -std::numeric_limits<double>::infinity());
  at::Tensor pick = worse.argmax(1, /*keepdim=*/true);
  auto [layer, neuron] = flat_to_layer(g.bounds, idx.gather(1, pick).squeeze(1));
  at::Tensor none = valid.select(1, 0).logical_not();  // no unstable unsplit ReLU left
  return {layer.masked_fill(none, -1), neuron.masked_fill(none, -1)};
}

}  // namespace tessera::lirpa::detail
