// The smoothed prolongator of the aggregation hierarchy, P = (I - w D^{-1} A) T, row by row
// straight from A and the aggregates: T has one entry per row, so A T needs no general sparse
// product (no T, no row-count and column-sized work arrays on the fine level, where rows are short).

#include <ATen/ATen.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "sla/precond/amg.h"
#include "sla/precond/row_view.h"

namespace tessera::sla::detail {
namespace {

/// One term a_ik of (A T)(i, agg(k)): the coarse column and the value.
using Term = std::pair<int64_t, double>;

/// Rows of A with at most this many entries are summed by sorting their terms (a handful,
/// no column-sized array); longer ones (the coarse levels of 3D problems hold hundreds per
/// row, where an insertion sort is quadratic) through a slot per coarse column.
constexpr int64_t kShortRow = 32;

/// A thread's workspace for the rows of A T.
struct RowSums {
  std::vector<Term> terms;     ///< the row's (c, (A T)(i, c)), sorted by c
  std::vector<int64_t> slot;   ///< long rows: the position of column c in `terms`, else -1 ([coarse], on first use)
};

/// Stable insertion sort by coarse column: equal columns keep their k order.
void sort_by_column(std::vector<Term>& terms) {
  for (size_t q = 1; q < terms.size(); ++q) {
    const Term t = terms[q];
    size_t r = q;
    for (; r > 0 && t.first < terms[r - 1].first; --r) terms[r] = terms[r - 1];
    terms[r] = t;
  }
}

/// Row i of A T with T(k, agg(k)) = 1: (A T)(i, c) = sum_{k in row i, agg(k) = c} a_ik, each
/// sum over k ascending from 0.0 (as a Gustavson product A T adds them: the same bits), into
/// sums.terms sorted by c; returns the number of columns. `rows`: a row view (row_view.h).
template <typename Rows>
int64_t aggregate_sums(const Rows& rows, const int64_t* agg, int64_t coarse, int64_t i, RowSums& sums) {
  std::vector<Term>& terms = sums.terms;
  std::vector<int64_t>& slot = sums.slot;
  terms.clear();
  if (rows.length(i) <= kShortRow) {
    rows.for_each(i, [&](int64_t k, double v) {
      if (agg[k] >= 0) terms.emplace_back(agg[k], v);                           // skip rows k outside every aggregate
    });
    sort_by_column(terms);
    int64_t distinct = 0;
    for (size_t q = 0; q < terms.size(); ++q) {
      if (distinct > 0 && terms[distinct - 1].first == terms[q].first) {
        terms[distinct - 1].second += terms[q].second;                          // (A T)(i, c) += a_ik
      } else {
        terms[distinct++] = {terms[q].first, 0.0 + terms[q].second};
      }
    }
    terms.resize(distinct);
    return distinct;
  }
  if (slot.empty()) slot.assign(coarse, -1);
  rows.for_each(i, [&](int64_t k, double v) {
    const int64_t c = agg[k];
    if (c < 0) return;
    if (slot[c] < 0) {
      slot[c] = static_cast<int64_t>(terms.size());
      terms.emplace_back(c, 0.0 + v);
    } else {
      terms[slot[c]].second += v;                                               // (A T)(i, c) += a_ik
    }
  });
  for (const Term& t : terms) slot[t.first] = -1;
  std::sort(terms.begin(), terms.end());                                        // distinct columns
  return static_cast<int64_t>(terms.size());
}

}  // namespace

CsrData smoothed_prolongator(const CsrData& a, const at::Tensor& inv_diag, double lambda_max,
                             const std::vector<int64_t>& agg, int64_t coarse) {
  const int64_t n = a.rows;
  const double omega = 4.0 / (3.0 * lambda_max);                                // w = 4 / (3 rho(D^{-1} A))
  // D^{-1} may be one value broadcast over the rows (stride 0): read it in place
  const at::Tensor d_inv = inv_diag.dim() == 1 && inv_diag.stride(0) == 0 && inv_diag.scalar_type() == at::kDouble
                               ? inv_diag
                               : inv_diag.contiguous().to(at::kDouble);
  const double* di = d_inv.data_ptr<double>();
  const int64_t ds = d_inv.stride(0);
  const int64_t* ag = agg.data();
  const at::ScalarType itype = a.index_type();
  CsrData p;
  with_index_type(itype, [&]<typename I>() {
    with_rows(a, [&](const auto& rows) {
      // pass 1: entries per row of P (at most those of A's row, so A's index type holds nnz(P))
      at::Tensor prp = at::empty({n + 1}, itype);
      I* pr = prp.data_ptr<I>();
      pr[0] = 0;
#pragma omp parallel
      {
        RowSums sums;
#pragma omp for schedule(static)
        for (int64_t i = 0; i < n; ++i) pr[i + 1] = static_cast<I>(aggregate_sums(rows, ag, coarse, i, sums));
      }
      for (int64_t i = 0; i < n; ++i) pr[i + 1] += pr[i];                        // row_ptr = prefix sum
      const int64_t nnz = pr[n];
      at::Tensor pci = at::empty({nnz}, itype), pva = at::empty({nnz}, at::kDouble);
      I* pc = pci.data_ptr<I>();
      double* pv = pva.data_ptr<double>();
      // pass 2: P(i, c) = -w / a_ii (A T)(i, c) + [c = agg(i)]
#pragma omp parallel
      {
        RowSums sums;
#pragma omp for schedule(static)
        for (int64_t i = 0; i < n; ++i) {
          const int64_t count = aggregate_sums(rows, ag, coarse, i, sums);
          const double s = (-omega) * di[i * ds];                               // s_i = -w / a_ii
          for (int64_t q = 0; q < count; ++q) {
            pc[pr[i] + q] = static_cast<I>(sums.terms[q].first);
            pv[pr[i] + q] = sums.terms[q].second * s;                           // -w D^{-1} A T
            if (sums.terms[q].first == ag[i]) pv[pr[i] + q] += 1.0;             // + T
          }
        }
      }
      p = CsrData{prp, pci, pva, n, coarse, nullptr};
    });
  });
  return p;
}

}  // namespace tessera::sla::detail
