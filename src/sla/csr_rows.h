#pragma once
// CSR arrays assembled row by row in two parallel passes, straight into their final tensors:
// no COO and no nnz-sized temporaries.

#include <ATen/ATen.h>

#include <cstdint>

namespace tessera::sla::detail {

/// Fills `row_ptr` ([rows + 1], index type I, allocated by the caller) and allocates `col`
/// (I) and `val` (float64): `count(r)` is the number of entries of row r, then
/// `write(r, cols, vals)` writes them at the row's offset, in column order.
/// row_ptr[r + 1] = sum_{s <= r} count(s) (the prefix sum of the counts).
template <typename I, typename Count, typename Write>
void assemble_csr_rows(int64_t rows, at::Tensor& row_ptr, at::Tensor& col, at::Tensor& val, const Count& count,
                       const Write& write) {
  I* rp = row_ptr.data_ptr<I>();
  rp[0] = 0;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) rp[r + 1] = static_cast<I>(count(r));
  for (int64_t r = 0; r < rows; ++r) rp[r + 1] += rp[r];
  col = at::empty({static_cast<int64_t>(rp[rows])}, row_ptr.options());
  val = at::empty({static_cast<int64_t>(rp[rows])}, at::kDouble);
  I* cp = col.data_ptr<I>();
  double* vp = val.data_ptr<double>();
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) write(r, cp + rp[r], vp + rp[r]);
}

}  // namespace tessera::sla::detail
