// Property detection (symmetry, positive diagonal, diagonal dominance) and the fill estimate.

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "tessera/sla/solve.h"

namespace tessera::sla {

namespace {

/// One O(nnz) pass over the rows (no transpose, no sort): the mirror a_ji of every entry
/// is found by binary search in row j (columns are sorted within rows).
template <typename index_t>
MatrixProperties scan_rows(const index_t* rp, const index_t* ci, const double* v, int64_t n, double scale) {
  bool symmetric = true, positive = true, dominant = true;
#pragma omp parallel for schedule(static) reduction(&& : symmetric, positive, dominant) if (n > 4096)
  for (int64_t i = 0; i < n; ++i) {
    double diag = 0.0, off = 0.0;
    bool has_diag = false;
    for (index_t p = rp[i]; p < rp[i + 1]; ++p) {
      const int64_t j = ci[p];
      if (j == i) {
        diag = v[p];
        has_diag = true;
        continue;
      }
      off += std::abs(v[p]);                                             // off(i) = sum_{j != i} |a_ij|
      if (!symmetric) continue;
      const index_t* first = ci + rp[j];
      const index_t* last = ci + rp[j + 1];
      const index_t* q = std::lower_bound(first, last, static_cast<index_t>(i));   // a_ji in row j
      symmetric = q != last && *q == i && std::abs(v[q - ci] - v[p]) <= 1e-12 * scale;
    }
    positive = positive && has_diag && diag > 0.0;
    dominant = dominant && std::abs(diag) >= off;                        // |a_ii| >= off(i)
  }
  MatrixProperties out;
  out.square = true;
  out.symmetric = symmetric;
  out.positive_diagonal = positive;
  out.diagonally_dominant = dominant;
  return out;
}

}  // namespace

MatrixProperties detect_properties(const SparseTensor& a, int64_t batch_index) {
  MatrixProperties p;
  p.square = a.rows() == a.cols();
  if (!p.square || a.nnz() == 0) return p;
  at::Tensor v = a.values().detach().reshape({a.batch_size(), a.nnz()})[batch_index].to(at::kCPU, at::kDouble).contiguous();
  at::Tensor rp = a.row_ptr().cpu().contiguous(), ci = a.col_idx().cpu().contiguous();
  double scale = 0.0;   // max |a_ij|, without an nnz-sized temporary
  const double* vp = v.data_ptr<double>();
  const int64_t nnz = v.numel();
#pragma omp parallel for schedule(static) reduction(max : scale) if (nnz > 65536)
  for (int64_t p = 0; p < nnz; ++p) scale = std::max(scale, std::abs(vp[p]));
  // symmetric: pattern and values (|a_ij - a_ji| <= 1e-12 max |a|); positive diagonal; weak dominance
  if (rp.scalar_type() == at::kInt) {
    return scan_rows(rp.data_ptr<int32_t>(), ci.data_ptr<int32_t>(), v.data_ptr<double>(), a.rows(), scale);
  }
  return scan_rows(rp.data_ptr<int64_t>(), ci.data_ptr<int64_t>(), v.data_ptr<double>(), a.rows(), scale);
}

namespace {

/// Largest |i - j| over the stored entries: the bandwidth of the ordering given.
template <typename index_t>
int64_t bandwidth(const index_t* rp, const index_t* ci, int64_t rows) {
  int64_t beta = 0;
#pragma omp parallel for schedule(static) reduction(max : beta) if (rows > 4096)
  for (int64_t i = 0; i < rows; ++i) {
    if (rp[i + 1] > rp[i]) beta = std::max({beta, i - static_cast<int64_t>(ci[rp[i]]),
                                            static_cast<int64_t>(ci[rp[i + 1] - 1]) - i});
  }
  return beta;
}

}  // namespace

double estimated_factor_bytes(int64_t rows, int64_t nnz, int64_t band, bool lu) {
  const double n = static_cast<double>(rows);
  double entries = static_cast<double>(nnz) * std::max(1.0, std::cbrt(n));   // nnz(L) ~ nnz n^{1/3} (3D)
  if (rows > 1 && nnz > 0) {
    const auto beta = static_cast<double>(band);
    // Any beta consecutive unknowns separate the graph: with beta <= 4 sqrt(n) (a 2D mesh in
    // a banded order) nested dissection fills ~ n log2 n entries per a small constant.
    if (beta <= 4.0 * std::sqrt(n)) entries = std::min(entries, 4.0 * n * std::log2(n));
    entries = std::min(entries, n * (beta + 1.0));                                 // banded: L stays in the band
  }
  return entries * 12.0 * (lu ? 2.0 : 1.0);
}

double estimated_factor_bytes(const SparseTensor& a, bool lu) {
  int64_t beta = 0;
  if (a.rows() > 1 && a.nnz() > 0) {
    at::Tensor rp = a.row_ptr().cpu(), ci = a.col_idx().cpu();
    beta = rp.scalar_type() == at::kInt ? bandwidth(rp.data_ptr<int32_t>(), ci.data_ptr<int32_t>(), a.rows())
                                        : bandwidth(rp.data_ptr<int64_t>(), ci.data_ptr<int64_t>(), a.rows());
  }
  return estimated_factor_bytes(a.rows(), a.nnz(), beta, lu);
}

}  // namespace tessera::sla
