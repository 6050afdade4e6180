// SparseTensor conversions: dense, transpose, dtype, diagonal, plain CSR for backends.

#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla {

at::Tensor SparseTensor::to_dense() const {
  const int64_t dim = values_.dim() - 1;
  std::vector<int64_t> flat = batch_shape(), shape = batch_shape();
  flat.push_back(rows_ * cols_);
  shape.push_back(rows_);
  shape.push_back(cols_);
  at::Tensor pos = row_indices() * cols_ + col_idx_.to(at::kLong);   // row-major position of entry p
  return at::zeros(flat, values_.options()).index_add(dim, pos, values_).reshape(shape);
}

namespace {

/// Counting sort of the entries by column (stable in the row): O(nnz), no comparison sort.
template <typename index_t>
void transpose_pattern(const at::Tensor& row_ptr, const at::Tensor& col_idx, int64_t rows, int64_t cols,
                       detail::TransposedPattern& tp) {
  const index_t* rp = row_ptr.data_ptr<index_t>();
  const index_t* ci = col_idx.data_ptr<index_t>();
  const int64_t nnz = col_idx.size(0);
  tp.row_ptr = at::zeros({cols + 1}, row_ptr.options());
  tp.col_idx = at::empty({nnz}, col_idx.options());
  tp.perm = at::empty({nnz}, at::kLong);
  index_t* trp = tp.row_ptr.data_ptr<index_t>();
  index_t* tci = tp.col_idx.data_ptr<index_t>();
  int64_t* perm = tp.perm.data_ptr<int64_t>();
  for (int64_t p = 0; p < nnz; ++p) ++trp[ci[p] + 1];                 // entries per column
  for (int64_t j = 0; j < cols; ++j) trp[j + 1] += trp[j];            // row_ptr of A^T
  std::vector<index_t> next(trp, trp + cols);
  for (int64_t i = 0; i < rows; ++i) {
    for (index_t p = rp[i]; p < rp[i + 1]; ++p) {
      const index_t q = next[ci[p]]++;                                // slot of a_ij in row j of A^T
      tci[q] = static_cast<index_t>(i);
      perm[q] = p;
    }
  }
}

}  // namespace

const detail::TransposedPattern& SparseTensor::transposed_pattern() const {
  if (!*transposed_) {
    at::Tensor rp = row_ptr_.cpu().contiguous(), ci = col_idx_.cpu().contiguous();
    auto tp = std::make_shared<detail::TransposedPattern>();
    if (rp.scalar_type() == at::kInt) {
      transpose_pattern<int32_t>(rp, ci, rows_, cols_, *tp);
    } else {
      transpose_pattern<int64_t>(rp, ci, rows_, cols_, *tp);
    }
    tp->row_ptr = tp->row_ptr.to(values_.device());
    tp->col_idx = tp->col_idx.to(values_.device());
    tp->perm = tp->perm.to(values_.device());
    *transposed_ = tp;
  }
  return **transposed_;
}

SparseTensor SparseTensor::transpose() const {
  const detail::TransposedPattern& tp = transposed_pattern();
  // values of A^T in its CSR order: values_T(q) = values(perm(q))
  return SparseTensor(tp.row_ptr, tp.col_idx, values_.index_select(values_.dim() - 1, tp.perm), cols_, rows_);
}

SparseTensor SparseTensor::to(at::ScalarType dtype) const {
  TESSERA_CHECK(dtype == at::kFloat || dtype == at::kDouble, Unsupported, "SparseTensor::to: float32 or float64 only");
  return with_values(values_.to(dtype));
}

namespace {

/// Position p of the stored a_ii in each row i < min(rows, cols) (-1 when not stored), by
/// binary search in the row's sorted columns: O(n log(nnz / n)), no nnz-sized temporary.
template <typename index_t>
at::Tensor diagonal_positions(const at::Tensor& row_ptr, const at::Tensor& col_idx, int64_t n) {
  const index_t* rp = row_ptr.data_ptr<index_t>();
  const index_t* ci = col_idx.data_ptr<index_t>();
  at::Tensor where = at::empty({n}, at::kLong);
  int64_t* w = where.data_ptr<int64_t>();
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) {
    const index_t* hit = std::lower_bound(ci + rp[i], ci + rp[i + 1], static_cast<index_t>(i));
    w[i] = hit != ci + rp[i + 1] && *hit == i ? hit - ci : -1;
  }
  return where;
}

}  // namespace

at::Tensor SparseTensor::diagonal() const {
  const int64_t n = std::min(rows_, cols_);
  std::vector<int64_t> shape = batch_shape();
  shape.push_back(n);
  const int64_t dim = values_.dim() - 1;
  at::Tensor rows, positions;   // diagonal entries: row i stores a_ii at position p
  if (row_ptr_.is_cpu()) {
    const at::Tensor where = row_ptr_.scalar_type() == at::kInt ? diagonal_positions<int32_t>(row_ptr_, col_idx_, n)
                                                                : diagonal_positions<int64_t>(row_ptr_, col_idx_, n);
    rows = (where >= 0).nonzero().flatten();
    positions = where.index_select(0, rows);
  } else {
    const at::Tensor row = row_indices();
    positions = (row == col_idx_.to(at::kLong)).nonzero().flatten();   // entries p with row(p) = col(p)
    rows = row.index_select(0, positions);
  }
  rows = rows.to(values_.device());
  positions = positions.to(values_.device());
  return at::zeros(shape, values_.options()).index_add(dim, rows, values_.index_select(dim, positions));
}

CsrMatrix SparseTensor::to_csr_matrix(int64_t batch_index) const {
  TESSERA_CHECK(batch_index >= 0 && batch_index < batch_size(), InvalidInput, "batch index ", batch_index,
                " out of range [0, ", batch_size(), ")");
  CsrMatrix m;
  m.rows = rows_;
  m.cols = cols_;
  m.row_ptr = row_ptr_.to(at::kCPU, at::kLong).contiguous();
  m.col_idx = col_idx_.to(at::kCPU, at::kLong).contiguous();
  m.values = values_.detach().reshape({-1, nnz()})[batch_index].to(at::kCPU, at::kDouble).contiguous();
  return m;
}

}  // namespace tessera::sla
