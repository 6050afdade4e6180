#pragma once
// SELL-C-σ storage of a CSR matrix (Kreutzer et al. 2014) and its product y = A x on the
// CPU. Rows are sorted by length (longest first) inside windows of σ rows, then cut into
// slices of C consecutive sorted rows; a slice stores its rows column-major and padded to
// its longest row (value 0, column repeated), so the C rows of a slice advance together and
// a vector unit (C = 4 float64 lanes of AVX2, 8 of AVX-512) takes one entry of each per step:
// no per-row loop end, no horizontal sum. Columns are int32, values float64. y is written
// through the row permutation (rows stay inside their σ window, so the stores stay local);
// with σ <= C the rows keep their order and a slice of 8 writes one whole cache line of y,
// with streaming (non-temporal) stores on AVX2: y is not read into the cache first.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace tessera::sla::detail {

struct SellForm {
  int chunk = 8;                  ///< C: rows per slice
  int64_t sigma = 256;            ///< σ: rows per sorting window (a multiple of C; C: no sorting)
  bool in_order() const { return sigma <= chunk; }
  int64_t rows = 0, nnz = 0;
  std::vector<int64_t> slice_ptr; ///< [slices + 1]: first stored entry of each slice
  std::vector<int32_t> row_of;    ///< [slices * C]: original row of each slot, -1 for padding rows
  at::Tensor values;              ///< float64 [stored]: slice s, step k, lane r at slice_ptr[s] + k C + r
  at::Tensor cols;                ///< int32 [stored], same layout
  int64_t slices() const { return static_cast<int64_t>(slice_ptr.size()) - 1; }
  int64_t stored() const { return slice_ptr.empty() ? 0 : slice_ptr.back(); }
  /// Stored entries / nonzeros (1 = no padding).
  double fill_ratio() const { return nnz > 0 ? static_cast<double>(stored()) / static_cast<double>(nnz) : 1.0; }
};

/// SELL-C-σ of a CSR matrix (row_ptr / col_idx int32 or int64 with columns < 2^31, values
/// float64 [nnz]). chunk 4 or 8; sigma a multiple of chunk (rounded up).
SellForm build_sell(const at::Tensor& row_ptr, const at::Tensor& col_idx, const at::Tensor& values, int64_t rows,
                    int chunk = 8, int64_t sigma = 256);

/// Row-length statistics behind the layout choice, one pass over row_ptr.
struct RowLengthStats {
  double mean = 0.0, stddev = 0.0;
  int64_t max = 0;
};
RowLengthStats row_length_stats(const at::Tensor& row_ptr);

/// σ for a matrix: C (rows in order, streaming stores) when slicing the rows as they come
/// pads at most 10% (row lengths that vary little, such as finite-volume and finite-element
/// matrices), else 256. One pass over row_ptr.
int64_t choose_sell_sigma(const at::Tensor& row_ptr, int chunk = 8);

/// Whether Auto picks SELL-C-σ for a matrix that is not a stencil: enough rows that the
/// product runs from memory (>= 2^17), short rows (mean <= 32: long rows vectorise in CSR
/// already) and a spread the σ windows absorb (stddev <= mean).
bool sell_pays(const RowLengthStats& s, int64_t rows);

/// Slices [s0, s1) of y = A x; returns sum_i x_i y_i when kDot (square A).
double sell_slices(const SellForm& f, const double* x, double* y, int64_t s0, int64_t s1, bool dot);

/// Slice blocks [blocks[t], blocks[t+1]) with about stored / threads entries each.
std::vector<int64_t> balance_slices(const SellForm& f, int threads);
/// The same for any slices of `chunk` rows given by their first entries slice_ptr [slices + 1].
std::vector<int64_t> balance_slice_ptr(const std::vector<int64_t>& slice_ptr, int chunk, int threads);

}  // namespace tessera::sla::detail
