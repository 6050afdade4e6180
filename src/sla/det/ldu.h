#pragma once
// A sparse LDU factorisation without pivoting on the symmetric pattern of A + A^T, and the
// selected inverse (Takahashi equations) it gives: the entries of A^{-1} on the pattern of
// the factor, which contains the pattern of A. This is the backward pass of logdet:
// d logdet|A| / dA_ij = (A^{-T})_ij, needed on A's pattern only.
//
//   P A P^T = L D U,  L unit lower, U unit upper, pattern(U) = pattern(L)^T,
//   P a fill-reducing AMD ordering of A + A^T (CHOLMOD's cholmod_l_amd).
//
// Cost: the numeric factorisation takes sum_k |L(:,k)| |L(k,:)| multiply-adds (the flops of a
// left-looking sparse Cholesky with this pattern, twice for the two triangles); the selected
// inverse takes sum_j sum_{k in L(:,j)} |L(:,k)| (the same order: one pass over column k of
// Z for each entry (k, j) of L). Memory is that of the factor, three times (L, U, Z).
// Without pivoting the factorisation is stable for SPD and diagonally dominant matrices; a
// pivot below 1e-13 max|a_ij| is reported (ok = false), never divided by.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "tessera/sla/backends/direct_backend.h"

namespace tessera::sla::detail {

struct LduSymbolic {
  int64_t n = 0;
  std::vector<int64_t> perm;     ///< row i of P A P^T is row perm[i] of A
  std::vector<int64_t> pinv;     ///< pinv[perm[i]] = i
  std::vector<int64_t> col_ptr;  ///< strict lower pattern of L, by columns (rows sorted)
  std::vector<int64_t> row_idx;
  std::vector<int64_t> row_ptr;  ///< row j of L: columns k < j ...
  std::vector<int64_t> row_pos;  ///< ... given by the position of (j, k) in column k
  /// Where each stored a_ab (CSR order) sits in P A P^T: kind 0 diagonal (pos = index),
  /// 1 strictly lower (pos in L's columns), 2 strictly upper (pos of the mirrored entry).
  std::vector<int8_t> a_kind;
  std::vector<int64_t> a_pos;
};

struct LduNumeric {
  std::vector<double> d;   ///< D
  std::vector<double> l;   ///< L's strictly lower entries, at the pattern's positions
  std::vector<double> u;   ///< U's entry (k, i) stored at the position of (i, k)
  bool ok = true;
  int64_t failed_pivot = -1;
};

/// Entries of Z = (P A P^T)^{-1} on the pattern: diagonal, lower (at L's positions) and
/// upper (Z_ki stored at the position of (i, k)).
struct SelectedInverse {
  std::vector<double> zd, zl, zu;
};

LduSymbolic ldu_analyze(const CsrMatrix& a);
LduNumeric ldu_factorize(const LduSymbolic& s, const CsrMatrix& a);
SelectedInverse selected_inverse(const LduSymbolic& s, const LduNumeric& f);
/// (A^{-T})_ab = (A^{-1})_ba for every stored a_ab, in A's CSR order (float64 [nnz]).
at::Tensor inverse_transpose_on_pattern(const LduSymbolic& s, const SelectedInverse& z);

}  // namespace tessera::sla::detail
