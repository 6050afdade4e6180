// SparseTensor conversions: dense, transpose, dtype, diagonal, plain CSR for backends.

#include <ATen/ATen.h>

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

const detail::TransposedPattern& SparseTensor::transposed_pattern() const {
  if (!*transposed_) {
    at::Tensor row = row_indices().cpu(), col = col_idx_.to(at::kCPU, at::kLong);
    at::Tensor key = col * rows_ + row;                                // column-major position
    at::Tensor perm = std::get<1>(key.sort(/*stable=*/true, 0, false));
    auto tp = std::make_shared<detail::TransposedPattern>();
    tp->row_ptr = at::zeros({cols_ + 1}, at::kLong);
    if (cols_ > 0) tp->row_ptr.narrow(0, 1, cols_).copy_(at::bincount(col, {}, cols_).cumsum(0));
    tp->row_ptr = tp->row_ptr.to(values_.device(), row_ptr_.scalar_type());
    tp->col_idx = row.index_select(0, perm).to(values_.device(), col_idx_.scalar_type());
    tp->perm = perm.to(values_.device());
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

at::Tensor SparseTensor::diagonal() const {
  at::Tensor row = row_indices();
  at::Tensor on_diag = (row == col_idx_.to(at::kLong)).nonzero().flatten();   // entries p with row(p) = col(p)
  std::vector<int64_t> shape = batch_shape();
  shape.push_back(std::min(rows_, cols_));
  const int64_t dim = values_.dim() - 1;
  return at::zeros(shape, values_.options())
      .index_add(dim, row.index_select(0, on_diag), values_.index_select(dim, on_diag));
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
