// SparseTensor: construction and validation of the CSR pattern, accessors.

#include "tessera/sla/sparse_tensor.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <limits>

#include "sla/kernels/csr_kernels.h"
#include "tessera/core/error.h"

namespace tessera::sla {
namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

void check_values(const at::Tensor& values) {
  TESSERA_CHECK(values.defined() && values.dim() >= 1, InvalidInput, "sparse values must be a tensor [..., nnz]");
  TESSERA_CHECK(values.scalar_type() == at::kFloat || values.scalar_type() == at::kDouble, Unsupported,
                "sparse values must be float32 or float64, got ", values.scalar_type());
}

/// int32 indices while rows, cols and nnz fit, int64 beyond.
at::ScalarType index_type(int64_t rows, int64_t cols, int64_t nnz) {
  return (rows < kInt32Max && cols < kInt32Max && nnz < kInt32Max) ? at::kInt : at::kLong;
}

/// row_ptr non-decreasing from 0 to nnz; columns in [0, cols), strictly increasing in each row.
template <typename I>
void check_csr_pattern(const at::Tensor& row_ptr, const at::Tensor& col_idx, int64_t rows, int64_t cols) {
  const I* rp = row_ptr.data_ptr<I>();
  const I* ci = col_idx.data_ptr<I>();
  const int64_t nnz = col_idx.size(0);
  TESSERA_CHECK(rp[0] == 0 && static_cast<int64_t>(rp[rows]) == nnz, InvalidInput,
                "row_ptr must start at 0 and end at nnz = ", nnz);
  int64_t bad_order = -1, bad_range = -1, bad_sort = -1;
#pragma omp parallel for schedule(static) reduction(max : bad_order) if (rows > 65536)
  for (int64_t i = 0; i < rows; ++i) {
    if (rp[i + 1] < rp[i]) bad_order = std::max(bad_order, i);
  }
  TESSERA_CHECK(bad_order < 0, InvalidInput, "row_ptr must be non-decreasing (row ", bad_order, ")");
#pragma omp parallel for schedule(static) reduction(max : bad_range, bad_sort) if (rows > 65536)
  for (int64_t i = 0; i < rows; ++i) {
    for (I p = rp[i]; p < rp[i + 1]; ++p) {
      if (ci[p] < 0 || ci[p] >= cols) bad_range = std::max(bad_range, i);
      if (p > rp[i] && ci[p] <= ci[p - 1]) bad_sort = std::max(bad_sort, i);
    }
  }
  TESSERA_CHECK(bad_range < 0, InvalidInput, "column index out of range [0, ", cols, ") in row ", bad_range);
  TESSERA_CHECK(bad_sort < 0, InvalidInput,
                "column indices must be sorted and unique within each row (use from_coo); row ", bad_sort);
}

}  // namespace

SparseTensor::SparseTensor(at::Tensor row_ptr, at::Tensor col_idx, at::Tensor values, int64_t rows, int64_t cols)
    : rows_(rows), cols_(cols) {
  const at::ScalarType itype = index_type(rows, cols, col_idx.size(0));
  row_ptr_ = row_ptr.to(values.device(), itype).contiguous();
  col_idx_ = col_idx.to(values.device(), itype).contiguous();
  values_ = values;
}

SparseTensor SparseTensor::from_csr(const at::Tensor& row_ptr, const at::Tensor& col_idx,
                                    const at::Tensor& values, int64_t rows, int64_t cols) {
  check_values(values);
  TESSERA_CHECK(rows >= 0 && cols >= 0, InvalidInput, "negative shape ", rows, " x ", cols);
  TESSERA_CHECK(row_ptr.dim() == 1 && row_ptr.size(0) == rows + 1, DimensionMismatch,
                "row_ptr must have rows + 1 = ", rows + 1, " entries, got ", row_ptr.sizes());
  TESSERA_CHECK(col_idx.dim() == 1 && col_idx.size(0) == values.size(-1), DimensionMismatch,
                "col_idx has ", col_idx.numel(), " entries but values have nnz = ", values.size(-1));
  // Indices keep their type (int32 stays int32): no int64 copy of a large pattern.
  const at::ScalarType itype = row_ptr.scalar_type() == at::kInt && col_idx.scalar_type() == at::kInt ? at::kInt
                                                                                                      : at::kLong;
  at::Tensor rp = row_ptr.to(at::kCPU, itype).contiguous(), ci = col_idx.to(at::kCPU, itype).contiguous();
  if (itype == at::kInt) {
    check_csr_pattern<int32_t>(rp, ci, rows, cols);
  } else {
    check_csr_pattern<int64_t>(rp, ci, rows, cols);
  }
  return SparseTensor(rp, ci, values, rows, cols);
}

SparseTensor SparseTensor::from_coo(const at::Tensor& values, const at::Tensor& row, const at::Tensor& col,
                                    int64_t rows, int64_t cols) {
  check_values(values);
  TESSERA_CHECK(rows >= 0 && cols >= 0, InvalidInput, "negative shape ", rows, " x ", cols);
  TESSERA_CHECK(row.dim() == 1 && col.dim() == 1 && row.size(0) == col.size(0) && row.size(0) == values.size(-1),
                DimensionMismatch, "COO row (", row.numel(), "), col (", col.numel(), ") and values (nnz ",
                values.size(-1), ") must have the same length");
  at::Tensor r = row.to(at::kCPU, at::kLong), c = col.to(at::kCPU, at::kLong);
  if (r.numel() > 0) {
    TESSERA_CHECK((r >= 0).all().item<bool>() && (r < rows).all().item<bool>(), InvalidInput,
                  "COO row index out of range [0, ", rows, ")");
    TESSERA_CHECK((c >= 0).all().item<bool>() && (c < cols).all().item<bool>(), InvalidInput,
                  "COO column index out of range [0, ", cols, ")");
  }
  at::Tensor key = r * cols + c;                                  // row-major position
  auto [sorted, order] = key.sort(/*stable=*/true, /*dim=*/0, /*descending=*/false);
  auto [unique, inverse_sorted, counts] = at::unique_consecutive(sorted, /*return_inverse=*/true);
  const int64_t dim = values.dim() - 1;
  at::Tensor v;
  if (unique.size(0) == key.size(0)) {
    v = values.index_select(dim, order.to(values.device()));     // a permutation: no duplicates
  } else {
    // inverse[e] = position of entry e in the merged pattern; merged = sum of its duplicates
    at::Tensor inverse = at::empty_like(inverse_sorted).scatter_(0, order, inverse_sorted);
    std::vector<int64_t> shape = values.sizes().vec();
    shape.back() = unique.size(0);
    v = at::zeros(shape, values.options()).index_add(dim, inverse.to(values.device()), values);
  }
  at::Tensor urow = at::div(unique, cols, "floor"), ucol = unique - urow * cols;
  at::Tensor row_ptr = at::zeros({rows + 1}, at::kLong);
  if (rows > 0) row_ptr.narrow(0, 1, rows).copy_(at::bincount(urow, {}, rows).cumsum(0));
  return SparseTensor(row_ptr, ucol, v, rows, cols);
}

SparseTensor SparseTensor::from_symmetric_coo(const at::Tensor& values, const at::Tensor& row,
                                              const at::Tensor& col, int64_t n, bool skew) {
  check_values(values);
  TESSERA_CHECK(row.numel() == col.numel() && row.numel() == values.size(-1), DimensionMismatch,
                "symmetric COO: row, col and values must have the same length");
  at::Tensor r = row.to(at::kCPU, at::kLong), c = col.to(at::kCPU, at::kLong);
  at::Tensor off = (r != c).nonzero().flatten();                  // entries that get a mirror
  TESSERA_CHECK(!skew || off.size(0) == r.size(0), InvalidInput,
                "skew-symmetric storage cannot hold diagonal entries");
  const int64_t dim = values.dim() - 1;
  at::Tensor mirrored = values.index_select(dim, off.to(values.device()));   // a_ji = a_ij (or -a_ij)
  if (skew) mirrored = -mirrored;
  at::Tensor full = at::cat({values, mirrored}, dim);
  return from_coo(full, at::cat({r, c.index_select(0, off)}), at::cat({c, r.index_select(0, off)}), n, n);
}

SparseTensor SparseTensor::from_dense(const at::Tensor& dense) {
  TESSERA_CHECK(dense.defined() && dense.dim() >= 2, InvalidInput, "from_dense expects [..., rows, cols]");
  check_values(dense);
  const int64_t rows = dense.size(-2), cols = dense.size(-1);
  at::Tensor flat = dense.reshape({-1, rows * cols});
  at::Tensor mask = (flat.detach() != 0).any(0).to(at::kCPU);    // stored where any batch element is nonzero
  at::Tensor pos = mask.nonzero().flatten();                       // row-major order: CSR order
  at::Tensor r = at::div(pos, cols, "floor");
  at::Tensor row_ptr = at::zeros({rows + 1}, at::kLong);
  if (rows > 0) row_ptr.narrow(0, 1, rows).copy_(at::bincount(r, {}, rows).cumsum(0));
  std::vector<int64_t> shape(dense.sizes().begin(), dense.sizes().end() - 2);
  shape.push_back(pos.size(0));
  at::Tensor values = flat.index_select(1, pos.to(dense.device())).reshape(shape);
  return SparseTensor(row_ptr, pos - r * cols, values, rows, cols);
}

std::vector<int64_t> SparseTensor::batch_shape() const {
  return std::vector<int64_t>(values_.sizes().begin(), values_.sizes().end() - 1);
}

int64_t SparseTensor::batch_size() const {
  int64_t b = 1;
  for (int64_t s : batch_shape()) b *= s;
  return b;
}

at::ScalarType SparseTensor::dtype() const { return values_.scalar_type(); }

SparseTensor SparseTensor::with_values(const at::Tensor& values) const {
  check_values(values);
  TESSERA_CHECK(values.size(-1) == nnz(), DimensionMismatch, "with_values: expected nnz = ", nnz(), ", got ",
                values.size(-1));
  SparseTensor out = *this;
  out.values_ = values;
  return out;
}

at::Tensor SparseTensor::row_indices() const { return detail::csr_row_indices(row_ptr_, nnz()); }

}  // namespace tessera::sla
