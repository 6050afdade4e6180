#pragma once
// CSR kernels without autograd: OpenMP loops on CPU, ATen gather/scatter elsewhere.
// Shapes are normalised by the callers: values [B, nnz], dense operands [Bx, n, k] with
// Bx either 1 (shared by the batch) or B.

#include <ATen/core/Tensor.h>

namespace tessera::sla::detail {

/// y[b, i, :] = sum_{p in row i} values[b, perm(p)] * x[b, col(p), :]   -> [B, rows, k].
/// `perm` (int64 [nnz]) is optional: when defined, entry p reads values[b, perm[p]]
/// (used to apply A^T through the transposed pattern without copying values).
at::Tensor csr_spmm(const at::Tensor& row_ptr, const at::Tensor& col_idx, const at::Tensor& perm,
                    const at::Tensor& values, const at::Tensor& x, int64_t rows);

/// out[b, p] = sum_k left[b, row(p), k] * right[b, col(p), k]   -> [B, nnz]; the gradient of
/// y = A x with respect to the stored values (left = dL/dy, right = x). Batch dims of
/// left/right broadcast (1 or B); B is the larger of the two.
at::Tensor csr_sampled_dot(const at::Tensor& row_ptr, const at::Tensor& col_idx,
                           const at::Tensor& left, const at::Tensor& right);

/// The reference versions (ATen index ops), used off CPU and by the kernel tests.
at::Tensor csr_spmm_reference(const at::Tensor& row_ptr, const at::Tensor& col_idx, const at::Tensor& perm,
                              const at::Tensor& values, const at::Tensor& x, int64_t rows);
at::Tensor csr_sampled_dot_reference(const at::Tensor& row_ptr, const at::Tensor& col_idx,
                                     const at::Tensor& left, const at::Tensor& right);

/// Row index of each stored entry (int64 [nnz]) from row_ptr.
at::Tensor csr_row_indices(const at::Tensor& row_ptr, int64_t nnz);

}  // namespace tessera::sla::detail
