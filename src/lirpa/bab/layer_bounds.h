#pragma once
// Bounds of every ReLU node's input (pre-activation) for a batch of domains.

#include <ATen/core/Tensor.h>

#include <vector>

namespace tessera::lirpa::detail {

/// Per ReLU node (graph_relus order) the pre-activation bounds of each domain, and which
/// domains are empty (ReLU splitting: split constraints can contradict each other).
struct LayerBounds {
  std::vector<at::Tensor> lower, upper;  ///< per ReLU node [B, n_j]
  at::Tensor infeasible;                 ///< [B] bool: the domain is empty (its final bound is +inf), or undefined
};

}  // namespace tessera::lirpa::detail
