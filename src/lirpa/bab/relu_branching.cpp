// BaBSR branching: the unstable, unsplit ReLU whose relaxation costs the bound the most.
// For the best row, the coefficient lambda of h_j = relu(z_j) in the lower bound: a
// negative lambda takes the upper line su (z - l), losing |lambda| u (-l) / (u - l) (its
// intercept); a small |lambda| (u - l) term breaks ties. And the two children of a split.

#include <ATen/ATen.h>

#include <limits>

#include "lirpa/bab/relu_bab.h"

namespace tessera::lirpa::detail {

at::Tensor babsr_scores(const LayerBounds& bounds, const std::vector<at::Tensor>& lambda,
                        const std::vector<at::Tensor>& split, const at::Tensor& rows) {
  std::vector<at::Tensor> scores;
  for (size_t j = 0; j < bounds.lower.size(); ++j) {
    const at::Tensor& l = bounds.lower[j];
    const at::Tensor& u = bounds.upper[j];
    at::Tensor lam = lambda[j].gather(1, rows.view({-1, 1, 1}).expand({l.size(0), 1, l.size(1)})).squeeze(1);
    at::Tensor unstable = (l < 0).logical_and(u > 0).logical_and(split[j] == 0);
    at::Tensor width = at::where(unstable, u - l, at::ones_like(u));
    at::Tensor intercept = u * (-l) / width;                                      // u (-l) / (u - l)
    at::Tensor s = (-lam).clamp_min(0) * intercept + 1e-3 * lam.abs() * (u - l);  // BaBSR-style score
    s = at::where(unstable, s + 1e-12, at::full_like(s, -std::numeric_limits<double>::infinity()));
    scores.push_back(s);
  }
  return at::cat(scores, 1);
}

std::pair<at::Tensor, at::Tensor> flat_to_layer(const LayerBounds& bounds, const at::Tensor& flat) {
  at::Tensor layer = at::zeros_like(flat), neuron = flat.clone();
  int64_t offset = 0;
  for (size_t j = 0; j + 1 < bounds.lower.size(); ++j) {
    offset += bounds.lower[j].size(1);
    at::Tensor past = flat >= offset;
    layer = at::where(past, at::full_like(layer, static_cast<int64_t>(j + 1)), layer);
    neuron = at::where(past, flat - offset, neuron);
  }
  return {layer, neuron};
}

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

std::pair<at::Tensor, at::Tensor> babsr_choice(const LayerBounds& bounds, const std::vector<at::Tensor>& lambda,
                                              const std::vector<at::Tensor>& split, const at::Tensor& rows) {
  auto [best, flat] = babsr_scores(bounds, lambda, split, rows).max(1);
  auto [layer, neuron] = flat_to_layer(bounds, flat);
  at::Tensor none = at::isinf(best);  // no unstable unsplit ReLU left
  return {layer.masked_fill(none, -1), neuron.masked_fill(none, -1)};
}

}  // namespace tessera::lirpa::detail
