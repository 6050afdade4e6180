#pragma once
// Internals of ReLU-splitting branch and bound.

#include <ATen/core/Tensor.h>

#include <vector>

#include "lirpa/bab/domain_blocks.h"
#include "lirpa/verify/batch_crown.h"

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

/// FSB (filtered smart branching): the `topk` best BaBSR candidates of each domain are
/// each split tentatively; both children are bounded by one cheap CROWN pass (the parent's
/// layer bounds with the split neuron clamped, the parent's slopes and multipliers); the
/// candidate whose worse child has the highest bound wins. (-1, -1) when nothing is left.
std::pair<at::Tensor, at::Tensor> fsb_choice(const ReluNet& net, const DomainBatch& d, const LayerBounds& bounds,
                                            const FinalBound& fb, const Relaxation& relax, const at::Tensor& rows,
                                            const at::Tensor& c, const at::Tensor& rhs, int topk);

/// Children of parents split at (layer, neuron): the first B with the ReLU active (+1),
/// the next B inactive (-1). Every other per-domain tensor is duplicated by the caller.
std::vector<at::Tensor> split_children(const std::vector<at::Tensor>& split, const at::Tensor& layer,
                                       const at::Tensor& neuron);

/// Per hidden layer: whether any domain has a split constraint there.
std::vector<bool> layers_with_splits(const std::vector<at::Tensor>& split);

}  // namespace tessera::lirpa::detail
