#pragma once
/// @file sparse_tensor.h
/// A sparse matrix whose values carry gradients: a CSR pattern shared by a batch of value
/// vectors. `row_ptr` / `col_idx` are int32 while rows, cols and nnz fit, int64 beyond;
/// `values` has shape `[..., nnz]` (leading batch dims share the pattern), float32 or
/// float64, and is an ordinary autograd-tracked tensor.
///
/// @code
///   using tessera::sla::SparseTensor;
///   auto v = at::tensor({4.0, -1.0, -1.0, 4.0}, at::kDouble).requires_grad_();
///   auto A = SparseTensor::from_coo(v, at::tensor({0, 0, 1, 1}), at::tensor({0, 1, 0, 1}), 2, 2);
///   at::Tensor y = tessera::sla::matvec(A, at::ones({2}, at::kDouble));   // A @ 1
///   y.sum().backward();                                                   // v.grad() on the pattern
/// @endcode

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "tessera/sla/backends/direct_backend.h"

namespace tessera::sla {

namespace detail {
/// The pattern of A^T and the permutation taking A's value order to A^T's value order:
/// values_T = values.index_select(-1, perm). Built once per pattern, on demand.
struct TransposedPattern {
  at::Tensor row_ptr;  ///< cols + 1
  at::Tensor col_idx;  ///< nnz
  at::Tensor perm;     ///< int64, nnz
};
}  // namespace detail

class SparseTensor {
 public:
  SparseTensor() = default;
  /// Validated CSR: row_ptr [rows+1] non-decreasing from 0 to nnz, col_idx [nnz] in range,
  /// sorted and unique within each row; values [..., nnz]. Indices are narrowed to int32
  /// where they fit.
  static SparseTensor from_csr(const at::Tensor& row_ptr, const at::Tensor& col_idx,
                               const at::Tensor& values, int64_t rows, int64_t cols);
  /// COO entries in any order; duplicates are summed (differentiably: the gradient of a
  /// duplicate is the gradient of the entry it was summed into). values [..., nnz_in].
  static SparseTensor from_coo(const at::Tensor& values, const at::Tensor& row,
                               const at::Tensor& col, int64_t rows, int64_t cols);
  /// Symmetric (or, with `skew`, skew-symmetric) storage: the entries given are one
  /// triangle; the mirrored entries are gathered from the same `values`, so the gradient of
  /// a stored off-diagonal value is the sum of the gradients of both entries it becomes.
  static SparseTensor from_symmetric_coo(const at::Tensor& values, const at::Tensor& row,
                                         const at::Tensor& col, int64_t n, bool skew = false);
  /// The non-zeros of a dense [..., rows, cols] tensor (entries nonzero in any batch
  /// element); values keep dense's autograd history.
  static SparseTensor from_dense(const at::Tensor& dense);

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t nnz() const { return col_idx_.defined() ? col_idx_.size(0) : 0; }
  const at::Tensor& row_ptr() const { return row_ptr_; }
  const at::Tensor& col_idx() const { return col_idx_; }
  const at::Tensor& values() const { return values_; }
  /// Leading batch shape of values (empty for a single matrix).
  std::vector<int64_t> batch_shape() const;
  /// Product of the batch shape (1 for a single matrix).
  int64_t batch_size() const;
  at::ScalarType dtype() const;

  /// Same pattern, other values ([..., nnz]); the transposed-pattern cache is shared.
  SparseTensor with_values(const at::Tensor& values) const;
  /// Dense [..., rows, cols]; differentiable in values.
  at::Tensor to_dense() const;
  /// A^T: a permutation of values (differentiable).
  SparseTensor transpose() const;
  /// Values cast to float32 / float64 (differentiable).
  SparseTensor to(at::ScalarType dtype) const;
  /// Main diagonal [..., min(rows, cols)] (zeros where not stored); differentiable.
  at::Tensor diagonal() const;
  /// Row index of every stored entry (int64 [nnz]).
  at::Tensor row_indices() const;
  /// Pattern and permutation of the transpose (computed once, shared by copies).
  const detail::TransposedPattern& transposed_pattern() const;
  /// Plain CSR for the direct backends: CPU, int64 indices, float64 values of batch
  /// element `batch_index` (detached).
  CsrMatrix to_csr_matrix(int64_t batch_index = 0) const;

 private:
  SparseTensor(at::Tensor row_ptr, at::Tensor col_idx, at::Tensor values, int64_t rows, int64_t cols);

  at::Tensor row_ptr_;
  at::Tensor col_idx_;
  at::Tensor values_;
  int64_t rows_ = 0;
  int64_t cols_ = 0;
  std::shared_ptr<std::shared_ptr<const detail::TransposedPattern>> transposed_ =
      std::make_shared<std::shared_ptr<const detail::TransposedPattern>>();
};

/// y = A x; x is [cols] or [cols, k] (shared by the batch) or [..., cols] / [..., cols, k]
/// with A's batch shape. Differentiable in A's values (on the pattern only) and x.
at::Tensor matvec(const SparseTensor& a, const at::Tensor& x);
/// y = A^T x; shapes as matvec with rows and cols swapped. Differentiable likewise.
at::Tensor rmatvec(const SparseTensor& a, const at::Tensor& x);

}  // namespace tessera::sla
