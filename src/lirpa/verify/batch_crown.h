#pragma once
// Batched CROWN / alpha-CROWN of the final rows on a ReluNet, for many input boxes at once
// (input splitting's final pass, from the boxes' hidden-layer bounds); everything is float64.
//
// Layer indices: hidden layer k (1 <= k < L) has pre-activation z_k; lists of per-layer
// tensors hold hidden layers at index k-1.

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

#include "relu_net.h"

namespace tessera::lirpa::detail {

/// Input boxes.
struct DomainBatch {
  at::Tensor xl, xu;  ///< [B, n_0]
  int64_t size() const { return xl.size(0); }
};

/// Pre-activation bounds of every hidden layer (of a chain), or of every ReLU node (of a
/// graph: graph_bab.h), with split constraints applied where there are any.
struct LayerBounds {
  std::vector<at::Tensor> lower, upper;  ///< per hidden layer [B, n_k]
  at::Tensor infeasible;                 ///< [B] bool: the split constraints contradict each other
};

/// Optimisable slopes of the final pass: per hidden layer [B, K, n_k] lower slopes of the
/// unstable ReLUs, in [0, 1] (undefined entries use CROWN's adaptive slopes).
struct Relaxation {
  std::vector<at::Tensor> alpha;
};

/// Lower bounds of g = C y - rhs.
struct FinalBound {
  at::Tensor lb;                  ///< [B, K] (+inf for infeasible domains)
  at::Tensor a_input;             ///< [B, K, n_0] linear coefficients on x (lb = a x + c minimised)
  std::vector<at::Tensor> lambda; ///< per hidden layer [B, K, n_k]: coefficients on h_k = relu(z_k)
};

/// One backward pass: lower bounds of C y - rhs over every box (c: [K, n_out], rhs: [K]).
FinalBound final_bound(const ReluNet& net, const DomainBatch& d, const LayerBounds& bounds, const at::Tensor& c,
                       const at::Tensor& rhs, const Relaxation& relax = {});

/// Options of the slope optimisation.
struct OptimiseOptions {
  int iterations = 20;
  double lr_alpha = 0.1, lr_decay = 0.98;
  /// Asked before every step (when set): true stops the optimisation, keeping the best
  /// bounds so far (the run's timeout).
  std::function<bool()> stop;
};

/// alpha-CROWN of the final rows: Adam on the slopes maximising the bound; returns the best
/// bound per row; `relax` holds the start point (may be empty: CROWN's slopes) and receives
/// the last slopes.
FinalBound optimise_final_bound(const ReluNet& net, const DomainBatch& d, const LayerBounds& bounds,
                                const at::Tensor& c, const at::Tensor& rhs, Relaxation& relax,
                                const OptimiseOptions& options);

}  // namespace tessera::lirpa::detail
