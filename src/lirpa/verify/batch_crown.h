#pragma once
// Batched CROWN / alpha-CROWN / beta-CROWN on a ReluNet, for many sub-domains at once
// (branch and bound). Every domain is an input box plus optional ReLU split constraints;
// everything is float64.
//
// Layer indices: hidden layer k (1 <= k < L) has pre-activation z_k; lists of per-layer
// tensors hold hidden layers at index k-1.

#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

#include "relu_net.h"

namespace tessera::lirpa::detail {

/// Sub-domains: input boxes and ReLU split constraints.
struct DomainBatch {
  at::Tensor xl, xu;               ///< [B, n_0]
  /// Per hidden layer [B, n_k] int8: +1 split active (z >= 0), -1 inactive (z <= 0), 0 none.
  /// Empty: no splits.
  std::vector<at::Tensor> split;
  int64_t size() const { return xl.size(0); }
};

/// Pre-activation bounds of every hidden layer, split constraints applied.
struct LayerBounds {
  std::vector<at::Tensor> lower, upper;  ///< per hidden layer [B, n_k]
  at::Tensor infeasible;                 ///< [B] bool: the split constraints contradict each other
};

/// CROWN bounds of every hidden layer (intersected with `parent` when given: bounds that
/// are sound on a superset of each domain).
LayerBounds intermediate_bounds(const ReluNet& net, const DomainBatch& d, const LayerBounds* parent = nullptr);

/// Optimisable relaxation parameters of the final pass (per hidden layer [B, K, n_k];
/// undefined entries use CROWN's adaptive slopes / no multipliers).
struct Relaxation {
  std::vector<at::Tensor> alpha;  ///< lower slopes of unstable ReLUs, in [0, 1]
  std::vector<at::Tensor> beta;   ///< multipliers of split constraints, >= 0
};

/// Lower bounds of g = C y - rhs.
struct FinalBound {
  at::Tensor lb;                  ///< [B, K] (+inf for infeasible domains)
  at::Tensor a_input;             ///< [B, K, n_0] linear coefficients on x (lb = a x + c minimised)
  std::vector<at::Tensor> lambda; ///< per hidden layer [B, K, n_k]: coefficients on h_k = relu(z_k)
};

/// One backward pass: lower bounds of C y - rhs over every domain (c: [K, n_out], rhs: [K]).
FinalBound final_bound(const ReluNet& net, const DomainBatch& d, const LayerBounds& bounds, const at::Tensor& c,
                       const at::Tensor& rhs, const Relaxation& relax = {});

/// Options of the joint alpha/beta optimisation.
struct OptimiseOptions {
  int iterations = 20;
  double lr_alpha = 0.1, lr_beta = 0.05, lr_decay = 0.98;
  bool use_beta = true;
  /// Asked before every step (when set): true stops the optimisation, keeping the best
  /// bounds so far (the run's timeout).
  std::function<bool()> stop;
  /// When set: combines the test "every domain of the batch is verified" over the ranks that
  /// each optimise a block of one batch (a collective, asked once per step on every rank), so
  /// all stop at the step where the whole batch would.
  std::function<bool(bool)> all_verified;
  /// When not empty: per hidden layer, whether it gets split multipliers (decided on the
  /// whole batch); empty: the layers where a domain of this batch has a split.
  std::vector<bool> beta_layers;
};

/// alpha(-beta)-CROWN: Adam on the slopes (and, with splits, the multipliers) maximising the
/// bound; returns the best bound per row; `relax` holds the start point (inherited alphas,
/// may be empty) and receives the last parameters.
FinalBound optimise_final_bound(const ReluNet& net, const DomainBatch& d, const LayerBounds& bounds,
                                const at::Tensor& c, const at::Tensor& rhs, Relaxation& relax,
                                const OptimiseOptions& options);

}  // namespace tessera::lirpa::detail
