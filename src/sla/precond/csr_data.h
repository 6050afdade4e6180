#pragma once
// A plain CSR matrix of the preconditioner set-ups (no autograd, no batch): index tensors of
// one integer type (int32 where nnz and cols fit, int64 beyond) and float64 values [nnz].
// Products use the shared CSR kernel, so applying one works on any device the tensors are on.
// A matrix-free CsrData (matrix_free()) holds no CSR tensors, only a CPU `plan` in stencil
// form (a constant-coefficient operator, one byte per row: csr_from_stencil); the AMG set-up
// reads its rows through row_view.h.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>

#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla::detail {

class SpmvPlan;

struct CsrData {
  at::Tensor row_ptr;  ///< [rows + 1]
  at::Tensor col_idx;  ///< [nnz], sorted within each row
  at::Tensor values;   ///< float64 [nnz]
  int64_t rows = 0;
  int64_t cols = 0;
  /// Set by `prepare()` on CPU: the bandwidth-bound single-vector kernel (stencil form when
  /// the matrix has one, else CSR on these tensors: no reformatted copy), used by `apply`
  /// for float64 CPU vectors.
  std::shared_ptr<const SpmvPlan> plan;
  /// Stored entries of a matrix-free operator (its stencil's set bits); unused otherwise.
  int64_t stored = 0;

  /// No CSR tensors: the rows are the stencil form of `plan` (CPU, float64 vectors only).
  bool matrix_free() const { return !col_idx.defined() && plan != nullptr; }
  int64_t nnz() const { return col_idx.defined() ? col_idx.size(0) : stored; }
  /// The index type of products built from this matrix: its own, or for a matrix-free one
  /// int32 where nnz and cols fit.
  at::ScalarType index_type() const;
  /// Builds `plan` when the tensors are on the CPU (once; a no-op elsewhere).
  void prepare();
  /// y = A x  (x [cols] -> [rows]).
  at::Tensor apply(const at::Tensor& x) const;
  /// y = A x into `y` ([rows], contiguous, x's dtype and device): no new vector.
  void apply(const at::Tensor& x, at::Tensor& y) const;
  /// y = A^T x  (x [rows] -> [cols]) without storing A^T: on the CPU each thread scatters its
  /// rows into its own [cols] buffer and the buffers are summed (no atomics).
  at::Tensor apply_transposed(const at::Tensor& x) const;
  /// y = A^T x into `y` ([cols], contiguous); `partial` is the threads' scatter buffers, kept
  /// by the caller between products ([threads, cols] float64; reallocated when its shape is not
  /// that). Bitwise the same as apply_transposed(x).
  void apply_transposed(const at::Tensor& x, at::Tensor& y, at::Tensor& partial) const;
  /// Main diagonal [min(rows, cols)] (zero where not stored).
  at::Tensor diagonal() const;
  /// Dense [rows, cols] (for tests and the coarsest level).
  at::Tensor to_dense() const;
};

/// Batch element `batch` of `a`, values detached and cast to float64 (indices shared).
CsrData csr_of(const SparseTensor& a, int64_t batch);

/// The matrix-free operator of a square stencil-form plan (plan->uses_stencil()).
CsrData csr_from_stencil(std::shared_ptr<const SpmvPlan> plan);

/// A^T with sorted rows.
CsrData csr_transpose(const CsrData& a);

/// C = A B (Gustavson, two passes, OpenMP over rows); A may be matrix-free.
CsrData csr_multiply(const CsrData& a, const CsrData& b);

/// C = R A P as R (A P): A P is stored for the second product (each of its rows formed once,
/// not once per row of R that reaches it) and freed on return.
CsrData csr_triple_product(const CsrData& r, const CsrData& a, const CsrData& p);

/// A_c = P^T A P without A P or P^T's values stored: each row of A_c from P^T's pattern (a
/// column-index transpose of P), P^T's values read from P, and each row of A P formed where it
/// is used (about nnz(P) / rows(P) times). The same bits as
/// csr_triple_product(csr_transpose(P), A, P); A may be matrix-free. For the finest level,
/// where A P (about 5 entries per fine row in 2D) and P^T would be the set-up's peak.
CsrData galerkin_product(const CsrData& a, const CsrData& p);

/// int32 when `nnz` and `cols` fit, else int64.
at::ScalarType index_dtype_for(int64_t nnz, int64_t cols);

/// Calls `f.template operator()<I>()` with I = int32_t for kInt indices, else int64_t.
template <typename F>
void with_index_type(at::ScalarType t, F&& f) {
  if (t == at::kInt) {
    f.template operator()<int32_t>();
  } else {
    f.template operator()<int64_t>();
  }
}

}  // namespace tessera::sla::detail
