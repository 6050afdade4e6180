#pragma once
// Internals of ReLU-splitting branch and bound.

#include <ATen/core/Tensor.h>

#include <vector>

#include "lirpa/bab/domain_blocks.h"
#include "lirpa/bab/layer_bounds.h"

namespace tessera::lirpa::detail {

/// BaBSR: for each domain, (hidden layer index j, neuron) of the ReLU to split, from the
/// bounds, the coefficients `lambda` ([B, K, n_j] per layer) of the final pass, the splits
/// and the best row of each domain; (-1, -1) when no unstable unsplit ReLU is left.
std::pair<at::Tensor, at::Tensor> babsr_choice(const LayerBounds& bounds, const std::vector<at::Tensor>& lambda,
                                              const std::vector<at::Tensor>& split, const at::Tensor& rows);

/// BaBSR scores of every hidden ReLU, layers concatenated ([B, sum_j n_j]); -inf for ReLUs
/// that are stable or already split.
at::Tensor babsr_scores(const LayerBounds& bounds, const std::vector<at::Tensor>& lambda,
                        const std::vector<at::Tensor>& split, const at::Tensor& rows);

/// (hidden layer index, neuron) of indices into the concatenated layers.
std::pair<at::Tensor, at::Tensor> flat_to_layer(const LayerBounds& bounds, const at::Tensor& flat);

/// The fields of a ReLU-splitting domain pool (graph_relu_split.cpp): per ReLU node j its split signs, pre-activation lower and upper bounds, the final rows' slopes and
/// split multipliers; then the chosen (layer, neuron), the root box a domain lies in, and
/// its rows' lower bounds (its children's floor, GraphDomains::lb_floor).
struct ReluPoolLayout {
  size_t relus;
  size_t split(size_t j) const { return 5 * j; }
  size_t lower(size_t j) const { return 5 * j + 1; }
  size_t upper(size_t j) const { return 5 * j + 2; }
  size_t alpha(size_t j) const { return 5 * j + 3; }
  size_t beta(size_t j) const { return 5 * j + 4; }
  size_t layer() const { return 5 * relus; }
  size_t neuron() const { return 5 * relus + 1; }
  size_t root() const { return 5 * relus + 2; }
  size_t rows_lb() const { return 5 * relus + 3; }
};

/// Children of parents split at (layer, neuron): the first B with the ReLU active (+1),
/// the next B inactive (-1). Every other per-domain tensor is duplicated by the caller.
std::vector<at::Tensor> split_children(const std::vector<at::Tensor>& split, const at::Tensor& layer,
                                       const at::Tensor& neuron);

}  // namespace tessera::lirpa::detail
