#pragma once
// Single-vector sparse products at the memory-bandwidth limit (CPU, in place, nothing
// allocated per product). The rows are split over the threads once, in blocks of equal
// numbers of nonzeros, and each thread keeps its block on every call (its part of x and y
// stays in its cache). Two storage forms:
//  - CSR: 12 bytes per nonzero (value + int32 column) plus the row pointer, x and y;
//  - stencil: a matrix whose diagonals (offset = col - row) are at most 8 and each hold one
//    value (a constant-coefficient stencil such as the Poisson matrices) is applied from the
//    coefficients and one byte per row saying which diagonals the row stores: 17 bytes per
//    row in all. Same products added in the same (ascending column) order as CSR, so the
//    result is the CSR result bit for bit.
// Values may be float32 with float64 vectors (opt-in: float64 accumulation, half the value
// bytes; exact for values that are float32 numbers).

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sla/kernels/sell.h"
#include "sla/kernels/sell_sym.h"
#include "tessera/sla/prepared_matvec.h"

namespace tessera::sla::detail {

/// The stencil form of a CSR matrix: empty `offsets` when it has none.
struct StencilForm {
  std::vector<int64_t> offsets;  ///< ascending diagonal offsets col - row
  std::vector<double> coeffs;    ///< the one value on each diagonal
  at::Tensor mask;               ///< uint8 [rows]: bit d set when row i stores diagonal d
  bool found() const { return !offsets.empty(); }
  /// Stored entries (the set bits of the mask): the nnz of the CSR it stands for.
  int64_t stored() const;
  /// Row blocks of `threads` threads as balance_rows gives them for the CSR this form stands
  /// for (so that blocked inner products add in the same order whichever form is held).
  std::vector<int64_t> balance(int threads) const;
};

/// O(nnz) scan: at most 8 diagonals, each with a single value (bitwise), else not found.
StencilForm detect_stencil(const at::Tensor& row_ptr, const at::Tensor& col_idx, const at::Tensor& values,
                           int64_t rows);

/// Row blocks [blocks[t], blocks[t+1]) with about nnz / threads nonzeros each.
std::vector<int64_t> balance_rows(const at::Tensor& row_ptr, int threads);

/// Number of threads a product of `nnz` multiply-adds should use (1 when small).
int spmv_threads(int64_t nnz);

/// A prepared y = A x for CPU vectors [cols] -> [rows] (float64, or float32 with float32 values).
class SpmvPlan {
 public:
  /// row_ptr / col_idx int32 or int64; values [nnz] float64 or float32 (contiguous, CPU).
  /// threads = 0: spmv_threads(nnz). Format Auto picks the stencil form when the matrix has
  /// one, else when sell_pays (float64 values) symmetric SELL when the matrix is symmetric
  /// bit for bit with a bandwidth its ring holds, else SELL-C-σ; Csr never does any of them;
  /// Stencil, Sell and SellSymmetric require theirs. (The other formats are PreparedMatvec's: it converts values /
  /// indices and passes Csr.)
  SpmvPlan(at::Tensor row_ptr, at::Tensor col_idx, at::Tensor values, int64_t rows, int64_t cols,
           SpmvFormat format = SpmvFormat::Auto, int threads = 0);
  /// The matrix-free product of a square stencil form (no CSR tensors at all): the same row
  /// blocks, products and sums as the plan of the CSR the form stands for, bit for bit.
  explicit SpmvPlan(StencilForm stencil, int threads = 0);

  /// y = A x (y [rows], preallocated, contiguous).
  void apply(const at::Tensor& x, at::Tensor& y) const;
  /// y = A x and returns <x, y> (square A only): CG's q = A p with <p, q> in the same pass.
  double apply_dot(const at::Tensor& x, at::Tensor& y) const;
  /// y = A x on raw float64 arrays (x [cols], y [rows]; float64 values): no tensor per call.
  void apply(const double* x, double* y) const;

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int threads() const { return static_cast<int>(blocks_.size()) - 1; }
  /// Row ranges of the threads, for vector updates beside the product (with SELL, the
  /// product's own blocks are slices, not rows).
  const std::vector<int64_t>& row_blocks() const { return row_blocks_; }
  bool uses_stencil() const { return stencil_.found(); }
  /// The stencil form (empty unless uses_stencil()).
  const StencilForm& stencil() const { return stencil_; }
  bool uses_sell() const { return !sell_.slice_ptr.empty(); }
  bool uses_sell_sym() const { return !sym_.empty(); }
  const char* format_name() const;
  /// Bytes one product must move at least: matrix data, x once, y once.
  double bytes_per_apply() const;

 private:
  double run(const at::Tensor& x, at::Tensor& y, bool dot) const;
  double sell_product(const double* x, double* y, bool dot) const;
  double sell_sym_product(const double* x, double* y, bool dot) const;

  at::Tensor row_ptr_, col_idx_, values_;
  int64_t rows_ = 0, cols_ = 0;
  StencilForm stencil_;
  SellForm sell_;                 ///< empty unless the product runs in SELL-C-σ
  SellSymForm sym_;               ///< empty unless the product runs in symmetric SELL
  std::vector<int64_t> blocks_;   ///< row blocks (slice blocks for both SELLs) of the threads
  std::vector<int64_t> row_blocks_;  ///< row blocks of the threads (blocks_ unless SELL)
  std::string format_name_;
};

/// y[b] = A_b x[b or 0] for one vector per batch element through the CSR kernel: values
/// [B, nnz], x [Bx, cols], y [B, rows] (CPU, contiguous, same floating dtype).
void csr_spmv_batched(const at::Tensor& row_ptr, const at::Tensor& col_idx, const at::Tensor& values,
                      const at::Tensor& x, at::Tensor& y);

}  // namespace tessera::sla::detail
