// ILU(0) and IC(0): factorisation on the pattern of A (IKJ / left-looking row sweeps with a
// dense position map) and sequential triangular solves.

#include "sla/precond/incomplete_factor.h"

#include <ATen/ATen.h>

#include <cmath>
#include <vector>

#include "tessera/core/error.h"

namespace tessera::sla::detail {
namespace {

/// Position of the diagonal of every row (-1 when not stored).
template <typename I>
at::Tensor find_diagonal(const CsrData& m) {
  at::Tensor pos = at::full({m.rows}, -1, at::kLong);
  int64_t* dp = pos.data_ptr<int64_t>();
  const I* rp = m.row_ptr.data_ptr<I>();
  const I* ci = m.col_idx.data_ptr<I>();
  for (int64_t i = 0; i < m.rows; ++i) {
    for (I p = rp[i]; p < rp[i + 1]; ++p) {
      if (ci[p] == i) dp[i] = p;
    }
  }
  return pos;
}

CsrData copy_of(const CsrData& a) {
  return CsrData{a.row_ptr, a.col_idx, a.values.to(at::kDouble).contiguous().clone(), a.rows, a.cols, nullptr};
}

/// Lower triangle (with diagonal) of `a`.
template <typename I>
CsrData lower_triangle(const CsrData& a) {
  const I* rp = a.row_ptr.data_ptr<I>();
  const I* ci = a.col_idx.data_ptr<I>();
  const double* va = a.values.data_ptr<double>();
  at::Tensor lrp = at::empty({a.rows + 1}, a.row_ptr.options());
  I* lp = lrp.data_ptr<I>();
  lp[0] = 0;
  for (int64_t i = 0; i < a.rows; ++i) {
    I c = 0;
    for (I p = rp[i]; p < rp[i + 1]; ++p) c += ci[p] <= i;
    lp[i + 1] = lp[i] + c;
  }
  at::Tensor lci = at::empty({static_cast<int64_t>(lp[a.rows])}, a.col_idx.options());
  at::Tensor lva = at::empty({static_cast<int64_t>(lp[a.rows])}, at::kDouble);
  I* lc = lci.data_ptr<I>();
  double* lv = lva.data_ptr<double>();
  for (int64_t i = 0, q = 0; i < a.rows; ++i) {
    for (I p = rp[i]; p < rp[i + 1]; ++p) {
      if (ci[p] <= i) { lc[q] = ci[p]; lv[q++] = va[p]; }
    }
  }
  return CsrData{lrp, lci, lva, a.rows, a.cols, nullptr};
}

/// In place on f.factor: a_ik /= u_kk; a_ij -= a_ik u_kj for (i, j) in the pattern.
template <typename I>
void factor_lu0(IncompleteFactor& f) {
  CsrData& m = f.factor;
  const I* rp = m.row_ptr.data_ptr<I>();
  const I* ci = m.col_idx.data_ptr<I>();
  double* v = m.values.data_ptr<double>();
  const int64_t* dp = f.diag_pos.data_ptr<int64_t>();
  std::vector<int64_t> pos(m.rows, -1);   // pos[j]: where column j sits in the current row
  for (int64_t i = 0; i < m.rows; ++i) {
    for (I p = rp[i]; p < rp[i + 1]; ++p) pos[ci[p]] = p;
    for (I p = rp[i]; p < rp[i + 1] && ci[p] < i; ++p) {
      const int64_t k = ci[p];
      v[p] /= v[dp[k]];                                     // l_ik = a_ik / u_kk
      for (I q = dp[k] + 1; q < rp[k + 1]; ++q) {
        if (pos[ci[q]] >= 0) v[pos[ci[q]]] -= v[p] * v[q];  // a_ij -= l_ik u_kj   (no fill)
      }
    }
    for (I p = rp[i]; p < rp[i + 1]; ++p) pos[ci[p]] = -1;
    if (v[dp[i]] == 0.0 || !std::isfinite(v[dp[i]])) {
      f.status = SolveStatus::Singular;
      f.message = "ILU(0): zero pivot at row " + std::to_string(i);
      return;
    }
  }
}

/// In place on the lower triangle: l_ik = (a_ik - sum_{j<k} l_ij l_kj) / l_kk,
/// l_ii = sqrt(a_ii - sum_{j<i} l_ij^2).
template <typename I>
void factor_ic0(IncompleteFactor& f) {
  CsrData& m = f.factor;
  const I* rp = m.row_ptr.data_ptr<I>();
  const I* ci = m.col_idx.data_ptr<I>();
  double* v = m.values.data_ptr<double>();
  std::vector<int64_t> pos(m.rows, -1);
  for (int64_t i = 0; i < m.rows; ++i) {
    const I diag = rp[i + 1] - 1;                         // sorted lower row: the diagonal is last
    for (I p = rp[i]; p < rp[i + 1]; ++p) pos[ci[p]] = p;
    for (I p = rp[i]; p < diag; ++p) {
      const int64_t k = ci[p];
      double s = v[p];
      for (I q = rp[k]; q < rp[k + 1] - 1; ++q) {         // j < k in row k of L
        if (pos[ci[q]] >= 0 && ci[q] < k) s -= v[pos[ci[q]]] * v[q];   // - l_ij l_kj
      }
      v[p] = s / v[rp[k + 1] - 1];                        // l_ik = s / l_kk
    }
    double d = v[diag];
    for (I p = rp[i]; p < diag; ++p) d -= v[p] * v[p];    // a_ii - sum_j l_ij^2
    for (I p = rp[i]; p < rp[i + 1]; ++p) pos[ci[p]] = -1;
    if (!(d > 0.0)) {
      f.status = SolveStatus::NotPositiveDefinite;
      f.message = "IC(0): non-positive pivot " + std::to_string(d) + " at row " + std::to_string(i) +
                  " (A is not SPD, or IC(0) breaks down on it: try ilu0 or amg)";
      return;
    }
    v[diag] = std::sqrt(d);
  }
}

/// ILU(0): M^{-1} r = U^{-1} L^{-1} r; transposed: M^{-T} r = L^{-T} U^{-T} r.
template <typename I>
void solve_lu(const IncompleteFactor& f, double* x, bool transpose) {
  const CsrData& m = f.factor;
  const I* rp = m.row_ptr.data_ptr<I>();
  const I* ci = m.col_idx.data_ptr<I>();
  const double* v = m.values.data_ptr<double>();
  const int64_t* dp = f.diag_pos.data_ptr<int64_t>();
  const int64_t n = m.rows;
  if (!transpose) {
    for (int64_t i = 0; i < n; ++i) {
      for (I p = rp[i]; p < dp[i]; ++p) x[i] -= v[p] * x[ci[p]];          // y_i = r_i - sum_k l_ik y_k
    }
    for (int64_t i = n - 1; i >= 0; --i) {
      for (I p = dp[i] + 1; p < rp[i + 1]; ++p) x[i] -= v[p] * x[ci[p]];  // x_i = y_i - sum_j u_ij x_j
      x[i] /= v[dp[i]];                                                    //       / u_ii
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {                                        // U^T y = r (column sweep)
    x[i] /= v[dp[i]];
    for (I p = dp[i] + 1; p < rp[i + 1]; ++p) x[ci[p]] -= v[p] * x[i];    // y_j -= u_ij y_i
  }
  for (int64_t i = n - 1; i >= 0; --i) {                                   // L^T x = y
    for (I p = rp[i]; p < dp[i]; ++p) x[ci[p]] -= v[p] * x[i];            // x_k -= l_ik x_i
  }
}

/// IC(0): M^{-1} r = L^{-T} L^{-1} r.
template <typename I>
void solve_cholesky(const IncompleteFactor& f, double* x) {
  const CsrData& m = f.factor;
  const I* rp = m.row_ptr.data_ptr<I>();
  const I* ci = m.col_idx.data_ptr<I>();
  const double* v = m.values.data_ptr<double>();
  const int64_t n = m.rows;
  for (int64_t i = 0; i < n; ++i) {
    const I diag = rp[i + 1] - 1;
    for (I p = rp[i]; p < diag; ++p) x[i] -= v[p] * x[ci[p]];   // L y = r
    x[i] /= v[diag];
  }
  for (int64_t i = n - 1; i >= 0; --i) {
    const I diag = rp[i + 1] - 1;
    x[i] /= v[diag];                                            // L^T x = y, column sweep
    for (I p = rp[i]; p < diag; ++p) x[ci[p]] -= v[p] * x[i];
  }
}

}  // namespace

IncompleteFactor incomplete_lu0(const CsrData& a) {
  TESSERA_CHECK(a.rows == a.cols, DimensionMismatch, "ILU(0) needs a square matrix, got ", a.rows, "x", a.cols);
  IncompleteFactor f;
  f.factor = copy_of(a);
  with_index_type(a.row_ptr.scalar_type(), [&]<typename I>() {
    f.diag_pos = find_diagonal<I>(f.factor);
    if ((f.diag_pos < 0).any().item<bool>()) {
      f.status = SolveStatus::Singular;
      f.message = "ILU(0): a row has no stored diagonal entry";
      return;
    }
    factor_lu0<I>(f);
  });
  return f;
}

IncompleteFactor incomplete_cholesky0(const CsrData& a) {
  TESSERA_CHECK(a.rows == a.cols, DimensionMismatch, "IC(0) needs a square matrix, got ", a.rows, "x", a.cols);
  IncompleteFactor f;
  f.cholesky = true;
  with_index_type(a.row_ptr.scalar_type(), [&]<typename I>() {
    f.factor = lower_triangle<I>(a);
    f.diag_pos = find_diagonal<I>(f.factor);
    if ((f.diag_pos < 0).any().item<bool>()) {
      f.status = SolveStatus::NotPositiveDefinite;
      f.message = "IC(0): a row has no stored (positive) diagonal entry";
      return;
    }
    factor_ic0<I>(f);
  });
  return f;
}

at::Tensor IncompleteFactor::apply(const at::Tensor& r, bool transpose) const {
  at::Tensor x = r.to(at::kCPU, at::kDouble).contiguous().clone();
  double* xp = x.data_ptr<double>();
  with_index_type(factor.row_ptr.scalar_type(), [&]<typename I>() {
    if (cholesky) {
      solve_cholesky<I>(*this, xp);
    } else {
      solve_lu<I>(*this, xp, transpose);
    }
  });
  return x.to(r.device(), r.scalar_type());
}

}  // namespace tessera::sla::detail
