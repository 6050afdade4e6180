#pragma once
// Autograd of eigsh(): eigenvalues by Hellmann-Feynman, eigenvectors by one MINRES solve
// with the deflated shifted matrix per eigenvector (see eigsh.h).

#include <ATen/core/Tensor.h>

#include <utility>

#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla::detail {

/// Returns (λ, V) as outputs of one autograd node whose input is `values` ([nnz]).
/// `a` holds the pattern; `lambda` [k] and `vectors` [n, k] are the float64 results.
std::pair<at::Tensor, at::Tensor> eigsh_autograd(const SparseTensor& a, const at::Tensor& values,
                                                 const at::Tensor& lambda, const at::Tensor& vectors);

/// The backward op, on its own: dL/dvalues [nnz] (float64) from dL/dλ [k] and dL/dV [n, k]
/// (either may be undefined). `a` has float64 values.
at::Tensor eigsh_backward(const SparseTensor& a, const at::Tensor& lambda, const at::Tensor& vectors,
                          const at::Tensor& grad_lambda, const at::Tensor& grad_vectors);

}  // namespace tessera::sla::detail
