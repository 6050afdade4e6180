#pragma once
// Cheap, sound bounds of a specification over many small input boxes at once, for
// input-splitting branch and bound on low-dimensional inputs (e.g. ACAS Xu's 5).
//
// Intermediate bounds, layer by layer: forward linear bounds in the normalised input
// e in [-1, 1]^n (x = centre + radius * e): every pre-activation z_k carries a lower and an
// upper affine form in e ([B, n+1, n_k] each: n coefficient rows and the constant row),
// propagated through W+ / W- and the ReLU relaxation, intersected with IBP (cost
// O(n_k^2 (n+1)) per layer and box). Then backward CROWN of only the neurons those bounds
// leave unstable (per box; rows padded to the batch's largest count), intersected: the
// bounds of stable neurons do not enter any relaxation, so this equals CROWN of every
// neuron at a fraction of its O(L^2 n_k^3) cost once the boxes are small.
// Final bound: one backward CROWN pass of the K specification rows with those bounds.
// A child box lies inside its parent, so the parent's layer bounds hold on it too: given,
// they are intersected into the child's at every layer (tighter, and monotone in the box:
// CROWN alone is not), before the backward pass picks the unstable neurons (fewer rows).

#include <ATen/core/Tensor.h>

#include <vector>

#include "lirpa/verify/batch_crown.h"

namespace tessera::lirpa::detail {

/// Lower bounds of g = C y - rhs over each box.
struct BoxBounds {
  at::Tensor lb;       ///< [B, K] lower bound of each row (sound)
  at::Tensor a_input;  ///< [B, K, n] coefficients on x of each row's linear lower bound
  LayerBounds layers;  ///< the hidden layers' pre-activation bounds used (sound on each box)
};

/// Bounds of C y - rhs over the boxes [xl, xu] ([B, n] float64 each; c [K, n_out], rhs [K]).
/// `parent`: layer bounds sound on a superset of each box (row b for box b), or null.
BoxBounds bound_input_boxes(const ReluNet& net, const at::Tensor& xl, const at::Tensor& xu, const at::Tensor& c,
                            const at::Tensor& rhs, const LayerBounds* parent = nullptr);

/// Lower bound over each box of max_k g_k (g = C y - rhs, a box is verified when it is > 0)
/// from the rows' linear lower bounds g_k(x) >= a_k x + d_k of `bound_input_boxes`
/// (lb [B, K], a [B, K, n]): max over lambda in the simplex of min_x sum_k lambda_k (a_k x + d_k),
/// by exponentiated-gradient ascent (every lambda gives a sound bound; the corners
/// lambda = e_k give max_k lb_k, so the result is never below that). [B].
at::Tensor conjunction_lower_bound(const at::Tensor& lb, const at::Tensor& a, const at::Tensor& xl,
                                   const at::Tensor& xu, int iterations = 30);

/// alpha-CROWN's lower bound over each box of max_k g_k (g = C y - rhs) with the boxes' hidden
/// layer bounds `layers` (sound on them): Adam on the final pass's slopes from CROWN's
/// (`options`: steps, learning rates, stop). [B]: the larger of every row's best bound over the
/// steps (max_k) and conjunction_lower_bound of the last step's rows, whose bounds and
/// coefficients come from one pass, as it requires.
at::Tensor alpha_conjunction_bound(const ReluNet& net, const at::Tensor& xl, const at::Tensor& xu, const at::Tensor& c,
                                   const at::Tensor& rhs, const LayerBounds& layers, const OptimiseOptions& options);

}  // namespace tessera::lirpa::detail
