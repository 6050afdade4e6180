#pragma once
// Internals of ReLU-splitting branch and bound.

#include <ATen/core/Tensor.h>

#include <vector>

#include "lirpa/verify/batch_crown.h"

namespace tessera::lirpa::detail {

/// BaBSR: for each domain, (hidden layer index j, neuron) of the ReLU to split, from the
/// bounds, the coefficients `lambda` ([B, K, n_j] per layer) of the final pass, the splits
/// and the best row of each domain; (-1, -1) when no unstable unsplit ReLU is left.
std::pair<at::Tensor, at::Tensor> babsr_choice(const LayerBounds& bounds, const std::vector<at::Tensor>& lambda,
                                              const std::vector<at::Tensor>& split, const at::Tensor& rows);

/// Children of parents split at (layer, neuron): the first B with the ReLU active (+1),
/// the next B inactive (-1). Every other per-domain tensor is duplicated by the caller.
std::vector<at::Tensor> split_children(const std::vector<at::Tensor>& split, const at::Tensor& layer,
                                       const at::Tensor& neuron);

}  // namespace tessera::lirpa::detail
