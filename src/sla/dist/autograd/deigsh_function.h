#pragma once
// Autograd of deigsh(): eigenvalues by Hellmann-Feynman on each rank's stored entries,
// eigenvectors by one distributed MINRES solve with the deflated shifted matrix per
// eigenvector (see deigsh.h).

#include <ATen/core/Tensor.h>

#include <utility>

#include "tessera/sla/dist/dsparse_tensor.h"

namespace tessera::sla::detail {

/// Returns (λ, V) as outputs of one autograd node whose input is this rank's `values`.
/// `a` holds the distributed pattern with float64 values; λ [k] (the same on every rank)
/// and V [owned, k] are the float64 results.
std::pair<at::Tensor, at::Tensor> deigsh_autograd(const DSparseTensor& a, const at::Tensor& values,
                                                  const at::Tensor& lambda, const at::Tensor& vectors);

/// The backward op on its own (collective): dL/dvalues [nnz_local] (float64) from this
/// rank's dL/dλ [k] (summed over the ranks here) and dL/dV [owned, k].
at::Tensor deigsh_backward(const DSparseTensor& a, const at::Tensor& lambda, const at::Tensor& vectors,
                           const at::Tensor& grad_lambda, const at::Tensor& grad_vectors);

}  // namespace tessera::sla::detail
