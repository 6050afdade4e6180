#pragma once
/// @file prepared_matvec.h
/// y = A x for one float64 vector through a prepared plan: the kernel tessera's CPU Krylov
/// solvers use. No autograd (use matvec for gradients). The rows are split over the
/// threads once by equal shares of nonzeros; a matrix whose diagonals each hold a single
/// value (a constant-coefficient stencil, e.g. poisson2d) is applied from its coefficients
/// and one byte per row, which moves ~4x fewer bytes than CSR and gives the same result bit
/// for bit. Nothing is allocated per product.
///
/// @code
///   auto A = tessera::sla::poisson2d(1000);
///   tessera::sla::PreparedMatvec op(A);                     // Auto: the stencil form here
///   at::Tensor x = at::randn({A.cols()}, at::kDouble), y = at::empty({A.rows()}, at::kDouble);
///   op.apply(x, y);                                         // y = A x
/// @endcode

#include <ATen/core/Tensor.h>

#include <memory>

#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla {

namespace detail {
class SpmvPlan;
}

/// Storage the product reads. Auto: Stencil when the matrix is one, else when the cheap rule
/// on row lengths says SELL pays (at least 2^17 rows, mean length <= 32, standard deviation
/// <= mean) SellSymmetric for a matrix symmetric bit for bit whose bandwidth (max |i - j|)
/// is under 2^15 - 16, else Sell; else Csr. Sell: SELL-C-σ (slices of C = 8 rows, int32 columns,
/// vectorised across rows, the same sums as CSR): rows in order with streaming stores of y
/// (σ = 8) when that pads at most 10%, else sorted by length in windows of σ = 256 rows.
/// CsrFloat32Values: float32 copies of the values, float64 accumulation (opt-in; exact only
/// for values that are float32 numbers). CsrInt64: int64 indices (for comparison).
/// SellSymmetric: the diagonal and the upper triangle only, in slices of 8 rows in order,
/// each stored a_ij used for y_i and y_j (2D 5-point rows: 32 bytes instead of 60); the sums
/// are CSR's in another order (equal to rounding), the same whatever the thread count.
enum class SpmvFormat { Auto, Csr, Stencil, CsrFloat32Values, CsrInt64, Sell, SellSymmetric };

class PreparedMatvec {
 public:
  /// Batch element `batch_index` of a (CPU). threads = 0: the ATen thread count (1 for
  /// small matrices). Stencil on a matrix that is not one throws InvalidInput.
  explicit PreparedMatvec(const SparseTensor& a, SpmvFormat format = SpmvFormat::Auto, int threads = 0,
                          int64_t batch_index = 0);

  /// y = A x; x [cols], y [rows]: float64, contiguous, CPU.
  void apply(const at::Tensor& x, at::Tensor& y) const;
  /// y = A x and returns <x, y> (square A).
  double apply_dot(const at::Tensor& x, at::Tensor& y) const;

  int64_t rows() const;
  int64_t cols() const;
  int threads() const;
  /// "csr", "stencil", "sell-8-8" / "sell-8-256" (C and σ), "sell-sym-8" or "csr-f32values" (and "csr" for CsrInt64
  /// too: see bytes_per_apply).
  const char* format_name() const;
  /// Bytes one product moves at least: per nonzero value + index (12 for float64 / int32),
  /// the stencil's byte per row, x and y once (8 + 8 per row of a square matrix); SELL counts
  /// its stored entries (padding included) at 12 bytes, symmetric SELL its stored values
  /// (diagonal and padding included) at 8 and its upper columns at 4.
  double bytes_per_apply() const;

 private:
  std::shared_ptr<const detail::SpmvPlan> plan_;
};

}  // namespace tessera::sla
