#pragma once
// Autograd entry points of the CSR products. Operands are normalised by matvec/rmatvec:
// values [B, nnz], x [Bx, n, k] with Bx in {1, B}; results are [B, m, k].

#include <ATen/core/Tensor.h>

#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla::detail {

/// y = A x with gradients for values (on the pattern) and x.
at::Tensor matvec_autograd(const SparseTensor& a, const at::Tensor& values, const at::Tensor& x);
/// y = A^T x with gradients for values (on the pattern) and x.
at::Tensor rmatvec_autograd(const SparseTensor& a, const at::Tensor& values, const at::Tensor& x);

/// The backward ops, callable and testable on their own (no autograd).
/// d<g, A x>/d values = g(row(p)) . x(col(p));  d<g, A x>/dx = A^T g.
at::Tensor matvec_grad_values(const SparseTensor& a, const at::Tensor& grad_y, const at::Tensor& x);
/// Sums a [B, ...] gradient over the batch when the operand was shared (batch 1).
at::Tensor reduce_to_batch(const at::Tensor& grad, int64_t batch);

}  // namespace tessera::sla::detail
