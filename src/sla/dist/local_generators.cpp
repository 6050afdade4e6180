#include "tessera/sla/dist/local_generators.h"

#include <ATen/ATen.h>

#include "tessera/core/error.h"

namespace tessera::sla {
namespace {

// Stencil rows: candidate columns [rows, s] in ascending order, kept where `valid`.
SparseTensor stencil_rows(const at::Tensor& cols, const at::Tensor& valid, const at::Tensor& weights,
                          int64_t global_cols, at::ScalarType dtype) {
  const int64_t rows = cols.size(0);
  at::Tensor counts = valid.sum(1);                                          // entries per row
  at::Tensor row_ptr = at::cat({at::zeros({1}, at::kLong), at::cumsum(counts, 0)});
  at::Tensor col_idx = cols.masked_select(valid);                            // row-major: sorted per row
  at::Tensor values = weights.to(dtype).expand({rows, weights.size(0)}).masked_select(valid);
  return SparseTensor::from_csr(row_ptr, col_idx, values, rows, global_cols);
}

void check_rows(const at::Tensor& global_rows, int64_t total) {
  TESSERA_CHECK(global_rows.dim() == 1, InvalidInput, "global_rows must be 1-D");
  if (global_rows.numel() > 0) {
    TESSERA_CHECK(global_rows.min().item<int64_t>() >= 0 && global_rows.max().item<int64_t>() < total,
                  InvalidInput, "global row ids must lie in [0, ", total, ")");
  }
}

}  // namespace

SparseTensor poisson2d_rows(int64_t n, const at::Tensor& global_rows, at::ScalarType dtype) {
  TESSERA_CHECK(n > 0, InvalidInput, "grid size must be positive, got ", n);
  check_rows(global_rows, n * n);
  at::Tensor i = global_rows.to(at::kLong);
  at::Tensor ix = i.remainder(n), iy = at::div(i, n, "floor");   // i = iy n + ix
  // neighbours in ascending column order: south, west, self, east, north
  at::Tensor cols = at::stack({i - n, i - 1, i, i + 1, i + n}, 1);
  at::Tensor valid = at::stack({iy > 0, ix > 0, at::ones_like(i, at::kBool), ix < n - 1, iy < n - 1}, 1);
  at::Tensor w = at::tensor({-1.0, -1.0, 4.0, -1.0, -1.0}, at::kDouble);
  return stencil_rows(cols, valid, w, n * n, dtype);
}

SparseTensor poisson3d_rows(int64_t n, const at::Tensor& global_rows, at::ScalarType dtype) {
  TESSERA_CHECK(n > 0, InvalidInput, "grid size must be positive, got ", n);
  check_rows(global_rows, n * n * n);
  at::Tensor i = global_rows.to(at::kLong);
  at::Tensor ix = i.remainder(n), iy = at::div(i, n, "floor").remainder(n), iz = at::div(i, n * n, "floor");
  const int64_t n2 = n * n;
  at::Tensor cols = at::stack({i - n2, i - n, i - 1, i, i + 1, i + n, i + n2}, 1);
  at::Tensor valid = at::stack({iz > 0, iy > 0, ix > 0, at::ones_like(i, at::kBool), ix < n - 1, iy < n - 1,
                                iz < n - 1},
                               1);
  at::Tensor w = at::tensor({-1.0, -1.0, -1.0, 6.0, -1.0, -1.0, -1.0}, at::kDouble);
  return stencil_rows(cols, valid, w, n2 * n, dtype);
}

}  // namespace tessera::sla
