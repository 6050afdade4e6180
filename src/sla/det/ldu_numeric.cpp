// Numeric LDU (left-looking, no pivoting) and the selected inverse by the Takahashi
// equations, both on the pattern from ldu_analyze.

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "sla/det/ldu.h"

namespace tessera::sla::detail {

LduNumeric ldu_factorize(const LduSymbolic& s, const CsrMatrix& a) {
  const int64_t n = s.n, nl = s.col_ptr[n];
  LduNumeric f;
  f.d.assign(n, 0.0);
  f.l.assign(nl, 0.0);
  f.u.assign(nl, 0.0);
  const double* av = a.values.data_ptr<double>();
  double scale = 0.0;
  for (size_t p = 0; p < s.a_kind.size(); ++p) {   // scatter P A P^T into D, L, U
    scale = std::max(scale, std::abs(av[p]));
    if (s.a_kind[p] == 0) f.d[s.a_pos[p]] += av[p];
    else if (s.a_kind[p] == 1) f.l[s.a_pos[p]] += av[p];
    else f.u[s.a_pos[p]] += av[p];
  }
  const double tiny = 1e-13 * scale;
  std::vector<int64_t> where(n, -1);   // row i -> its position in the current column j
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t p = s.col_ptr[j]; p < s.col_ptr[j + 1]; ++p) where[s.row_idx[p]] = p;
    double dj = f.d[j];
    for (int64_t e = s.row_ptr[j]; e < s.row_ptr[j + 1]; ++e) {
      const int64_t pjk = s.row_pos[e];                         // (j, k), k < j
      const int64_t k = [&] {                                   // column of position pjk
        return static_cast<int64_t>(std::upper_bound(s.col_ptr.begin(), s.col_ptr.end(), pjk) - s.col_ptr.begin()) - 1;
      }();
      const double ljk = f.l[pjk], ukj = f.u[pjk], dk = f.d[k];
      dj -= ljk * dk * ukj;                                     // d_j = a_jj - sum_k L_jk d_k U_kj
      for (int64_t q = pjk + 1; q < s.col_ptr[k + 1]; ++q) {    // rows i > j of column k
        const int64_t t = where[s.row_idx[q]];
        f.l[t] -= f.l[q] * dk * ukj;                            // a_ij - L_ik d_k U_kj
        f.u[t] -= ljk * dk * f.u[q];                            // a_ji - L_jk d_k U_ki
      }
    }
    if (!(std::abs(dj) > tiny)) {
      f.ok = false;
      f.failed_pivot = j;
      return f;
    }
    f.d[j] = dj;
    for (int64_t p = s.col_ptr[j]; p < s.col_ptr[j + 1]; ++p) {
      f.l[p] /= dj;                                             // L_ij = (...) / d_j
      f.u[p] /= dj;                                             // U_ji = (...) / d_j
    }
  }
  return f;
}

SelectedInverse selected_inverse(const LduSymbolic& s, const LduNumeric& f) {
  const int64_t n = s.n, nl = s.col_ptr[n];
  SelectedInverse z;
  z.zd.assign(n, 0.0);
  z.zl.assign(nl, 0.0);
  z.zu.assign(nl, 0.0);
  std::vector<int64_t> where(n, -1);           // row i -> position of (i, j) in column j
  std::vector<double> accl(n, 0.0), accu(n, 0.0);
  for (int64_t j = n - 1; j >= 0; --j) {
    const int64_t begin = s.col_ptr[j], end = s.col_ptr[j + 1];
    for (int64_t p = begin; p < end; ++p) where[s.row_idx[p]] = p;
    // accl_i = sum_{k in S} Z_ik L_kj,  accu_i = sum_{k in S} U_jk Z_ki  for i in S = rows of L(:, j)
    for (int64_t p = begin; p < end; ++p) {
      const int64_t k = s.row_idx[p];
      const double lkj = f.l[p], ujk = f.u[p];
      accl[k] += z.zd[k] * lkj;
      accu[k] += ujk * z.zd[k];
      for (int64_t r = s.col_ptr[k]; r < s.col_ptr[k + 1]; ++r) {   // (i, k), i > k
        const int64_t pi = where[s.row_idx[r]];
        if (pi < 0) continue;
        const int64_t i = s.row_idx[r];
        accl[i] += z.zl[r] * lkj;        // Z_ik L_kj
        accl[k] += z.zu[r] * f.l[pi];    // Z_ki L_ij
        accu[i] += ujk * z.zu[r];        // U_jk Z_ki
        accu[k] += f.u[pi] * z.zl[r];    // U_ji Z_ik
      }
    }
    double zjj = 1.0 / f.d[j];
    for (int64_t p = begin; p < end; ++p) {
      const int64_t i = s.row_idx[p];
      z.zl[p] = -accl[i];                // Z_ij = -sum_k Z_ik L_kj
      z.zu[p] = -accu[i];                // Z_ji = -sum_k U_jk Z_ki
      zjj -= f.u[p] * z.zl[p];           // Z_jj = 1/d_j - sum_k U_jk Z_kj
      accl[i] = accu[i] = 0.0;
      where[i] = -1;
    }
    z.zd[j] = zjj;
  }
  return z;
}

at::Tensor inverse_transpose_on_pattern(const LduSymbolic& s, const SelectedInverse& z) {
  const int64_t nnz = static_cast<int64_t>(s.a_kind.size());
  at::Tensor out = at::empty({nnz}, at::kDouble);
  double* o = out.data_ptr<double>();
  for (int64_t p = 0; p < nnz; ++p) {
    // a_ab at (i, j) of P A P^T; (A^{-T})_ab = (A^{-1})_ba = Z_ji
    switch (s.a_kind[p]) {
      case 0: o[p] = z.zd[s.a_pos[p]]; break;
      case 1: o[p] = z.zu[s.a_pos[p]]; break;   // i > j: Z_ji is upper, stored with (i, j)
      default: o[p] = z.zl[s.a_pos[p]]; break;  // i < j: Z_ji is lower, at (j, i)
    }
  }
  return out;
}

}  // namespace tessera::sla::detail
