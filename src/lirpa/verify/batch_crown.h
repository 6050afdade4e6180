#pragma once
// Batched CROWN / alpha-CROWN on a ReluNet, for many input boxes at once (input splitting;
// ReLU splitting runs on the graph engine, graph_beta.cpp). Everything is float64.
//
// Layer indices: hidden layer k (1 <= k < L) has pre-activation z_k; lists of per-layer
// tensors hold hidden layers at index k-1.

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

#include "relu_net.h"

namespace tessera::lirpa::detail {

/// Sub-domains: input boxes.
struct DomainBatch {
  at::Tensor xl, xu;  ///< [B, n_0]
  int64_t size() const { return xl.size(0); }
};

/// Pre-activation bounds of every hidden layer (also the graph engine's ReLU-splitting
/// domains' bounds, graph_domains.cpp, whose split constraints can make a domain empty).
struct LayerBounds {
  std::vector<at::Tensor> lower, upper;  ///< per hidden layer [B, n_k]
  at::Tensor infeasible;                 ///< [B] bool: the domain is empty (its final bound is +inf)
};

/// CROWN bounds of every hidden layer, layer by layer (the reference of the tests; input
/// splitting bounds its boxes with bound_input_boxes).
LayerBounds intermediate_bounds(const ReluNet& net, const DomainBatch& d);

/// Optimisable relaxation parameters of the final pass (per hidden layer [B, K, n_k];
/// undefined entries use CROWN's adaptive slopes).
struct Relaxation {
  std::vector<at::Tensor> alpha;  ///< lower slopes of unstable ReLUs, in [0, 1]
};

/// Lower bounds of g = C y - rhs.
struct FinalBound {
  at::Tensor lb;       ///< [B, K]
  at::Tensor a_input;  ///< [B, K, n_0] linear coefficients on x (lb = a x + c minimised)
};

/// One backward pass: lower bounds of C y - rhs over every domain (c: [K, n_out], rhs: [K]).
FinalBound final_bound(const ReluNet& net, const DomainBatch& d, const LayerBounds& bounds, const at::Tensor& c,
                       const at::Tensor& rhs, const Relaxation& relax = {});

/// Options of the slopes' optimisation.
struct OptimiseOptions {
  int iterations = 20;
  double lr_alpha = 0.1, lr_decay = 0.98;
  /// Asked before every step (when set): true stops the optimisation, keeping the best
  /// bounds so far (the run's timeout).
  std::function<bool()> stop;
};

/// alpha-CROWN: Adam on the slopes maximising the bound; returns the best bound per row;
/// `relax` holds the start point (may be empty: CROWN's slopes) and receives the last ones.
FinalBound optimise_final_bound(const ReluNet& net, const DomainBatch& d, const LayerBounds& bounds,
                                const at::Tensor& c, const at::Tensor& rhs, Relaxation& relax,
                                const OptimiseOptions& options);

}  // namespace tessera::lirpa::detail
