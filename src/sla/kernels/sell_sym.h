#pragma once
// Symmetric SELL: a symmetric matrix stored by its diagonal and its strictly upper triangle
// only, in slices of C = 8 consecutive rows (column-major inside a slice, padded to the
// slice's longest upper row), and its product y = A x on the CPU. Each stored a_ij (j > i)
// is used twice:
//   y_i += a_ij x_j   (gathered, as in SELL-C-σ)
//   y_j += a_ij x_i   (scattered into a ring of partial sums ahead of the current slice)
// so the product reads (nnz + n) / 2 values and (nnz - n) / 2 columns instead of nnz of
// each: 2D 5-point rows 60 -> 32 bytes, 3D 7-point 84 -> 44.
//
// The ring holds row j's contributions from the rows before it, slot j mod R (R a power of
// two >= reach + 2 C, reach = max (j - i) over the stored entries): row j's slot is read
// and cleared when slice j / C is finished, after every row i < j that stores a_ij has been
// through. A range of slices that does not start at slice 0 first replays the scatters of
// the rows up to `reach` before it (into its own rows only), so every y_i is added in the
// same order whatever the split into threads and pieces: y does not depend on the blocks.
// Rows stay in order; y is written once per slice by streaming stores on AVX2.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::sla::detail {

struct SellSymForm {
  static constexpr int kChunk = 8;  ///< C: rows per slice
  int64_t rows = 0, nnz = 0;        ///< nnz: of the whole matrix (both triangles)
  int64_t reach = 0;                ///< max j - i over the stored upper entries
  int64_t ring = 0;                 ///< ring slots R (power of two >= reach + 2 C)
  /// [slices + 1]: first upper entry of each slice in `cols`; in `values` slice s starts at
  /// slice_ptr[s] + C s with its C diagonal values, then its upper steps.
  std::vector<int64_t> slice_ptr;
  at::Tensor values;                ///< float64 [C slices + upper stored]
  at::Tensor cols;                  ///< int32 [upper stored]: step k, lane r at slice_ptr[s] + k C + r
  bool empty() const { return slice_ptr.empty(); }
  int64_t slices() const { return static_cast<int64_t>(slice_ptr.size()) - 1; }
  int64_t upper_stored() const { return slice_ptr.empty() ? 0 : slice_ptr.back(); }
  /// Bytes of the matrix data one product reads (values and columns).
  double matrix_bytes() const;
};

/// Largest ring the product may use (slots): 2^15 float64, 256 KiB, stays in a core's cache.
constexpr int64_t kMaxSymRing = int64_t{1} << 15;

/// The symmetric form of a square CSR matrix (row_ptr / col_idx int32 or int64, columns
/// sorted within rows, values float64 [nnz]), or an empty form (and `why` says why) when
/// the matrix is not symmetric bit for bit (same pattern, a_ij == a_ji), when its reach
/// needs a ring larger than max_ring, or when it has 2^31 rows or more.
SellSymForm build_sell_sym(const at::Tensor& row_ptr, const at::Tensor& col_idx, const at::Tensor& values,
                           int64_t rows, int64_t max_ring = kMaxSymRing, std::string* why = nullptr);

/// Slices [s0, s1) of y = A x; returns sum_i x_i y_i over their rows when dot.
double sell_sym_slices(const SellSymForm& f, const double* x, double* y, int64_t s0, int64_t s1, bool dot);

}  // namespace tessera::sla::detail
