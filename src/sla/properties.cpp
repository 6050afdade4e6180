// Property detection (symmetry, positive diagonal, diagonal dominance) and the fill estimate.

#include <ATen/ATen.h>

#include <cmath>

#include "tessera/sla/solve.h"

namespace tessera::sla {

MatrixProperties detect_properties(const SparseTensor& a, int64_t batch_index) {
  MatrixProperties p;
  p.square = a.rows() == a.cols();
  if (!p.square || a.nnz() == 0) return p;
  at::Tensor v = a.values().detach().reshape({a.batch_size(), a.nnz()})[batch_index].to(at::kDouble);
  const detail::TransposedPattern& tp = a.transposed_pattern();
  // Symmetric pattern: A^T has the same CSR structure; symmetric values: v_T = v.
  const bool same_pattern = at::equal(tp.row_ptr, a.row_ptr()) && at::equal(tp.col_idx, a.col_idx());
  if (same_pattern) {
    const double scale = v.abs().max().item<double>();
    p.symmetric = (v.index_select(0, tp.perm) - v).abs().max().item<double>() <= 1e-12 * scale;
  }
  at::Tensor row = a.row_indices(), col = a.col_idx().to(at::kLong);
  at::Tensor on_diag = row == col;
  at::Tensor diag = at::zeros({a.rows()}, v.options()).index_add(0, row.index_select(0, on_diag.nonzero().flatten()),
                                                                 v.index_select(0, on_diag.nonzero().flatten()));
  at::Tensor has_diag = at::zeros({a.rows()}, row.options()).index_add(0, row, on_diag.to(at::kLong)) > 0;
  p.positive_diagonal = has_diag.all().item<bool>() && (diag > 0).all().item<bool>();
  // off(i) = sum_{j != i} |a_ij|;  weakly dominant: |a_ii| >= off(i)
  at::Tensor off = at::zeros({a.rows()}, v.options()).index_add(0, row, v.abs() * (~on_diag).to(at::kDouble));
  p.diagonally_dominant = (diag.abs() >= off).all().item<bool>();
  return p;
}

double estimated_factor_bytes(const SparseTensor& a, bool lu) {
  const double n = static_cast<double>(a.rows());
  const double entries = static_cast<double>(a.nnz()) * std::max(1.0, std::cbrt(n));   // nnz(L) ~ nnz n^{1/3}
  return entries * 12.0 * (lu ? 2.0 : 1.0);
}

}  // namespace tessera::sla
