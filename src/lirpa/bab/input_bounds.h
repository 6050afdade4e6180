#pragma once
// Cheap, sound bounds of a specification over many small input boxes at once, for
// input-splitting branch and bound on low-dimensional inputs (e.g. ACAS Xu's 5).
//
// Intermediate bounds: forward linear bounds in the normalised input e in [-1, 1]^n
// (x = centre + radius * e): every pre-activation z_k carries a lower and an upper affine
// form in e ([B, n+1, n_k] each: n coefficient rows and the constant row), propagated
// layer by layer through W+ / W- and the ReLU relaxation, intersected with IBP. The cost
// is O(L n_k^2 (n+1)) per box instead of backward CROWN's O(L^2 n_k^3).
// Final bound: one backward CROWN pass of the K specification rows with those bounds.

#include <ATen/core/Tensor.h>

#include "lirpa/verify/relu_net.h"

namespace tessera::lirpa::detail {

/// Lower bounds of g = C y - rhs over each box.
struct BoxBounds {
  at::Tensor lb;       ///< [B, K] lower bound of each row (sound)
  at::Tensor a_input;  ///< [B, K, n] coefficients on x of each row's linear lower bound
};

/// Bounds of C y - rhs over the boxes [xl, xu] ([B, n] float64 each; c [K, n_out], rhs [K]).
BoxBounds bound_input_boxes(const ReluNet& net, const at::Tensor& xl, const at::Tensor& xu, const at::Tensor& c,
                            const at::Tensor& rhs);

}  // namespace tessera::lirpa::detail
