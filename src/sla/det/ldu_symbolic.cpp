// Symbolic phase of the symmetric-pattern LDU: AMD ordering, elimination tree, the pattern
// of L by row subtrees, and where A's entries land in the factor.

#include <ATen/ATen.h>
#if TESSERA_WITH_CHOLMOD
#include <cholmod.h>
#endif

#include <algorithm>
#include <cstring>

#include "sla/det/ldu.h"
#include "tessera/core/error.h"

namespace tessera::sla::detail {
namespace {

/// AMD ordering of the pattern of A + A^T (upper triangle handed to CHOLMOD). Without
/// CHOLMOD: the given order (the same selected inverse, with more fill).
std::vector<int64_t> amd_order(const CsrMatrix& a) {
  const int64_t n = a.rows;
#if !TESSERA_WITH_CHOLMOD
  std::vector<int64_t> identity(n);
  for (int64_t i = 0; i < n; ++i) identity[i] = i;
  return identity;
#else
  at::Tensor rp = a.row_ptr;
  at::Tensor r = at::repeat_interleave(rp.narrow(0, 1, n) - rp.narrow(0, 0, n));
  at::Tensor c = a.col_idx;
  at::Tensor lo = at::minimum(r, c), hi = at::maximum(r, c);
  at::Tensor key = std::get<0>(at::_unique(hi * n + lo, /*sorted=*/true));   // column hi holds row lo
  at::Tensor cols = key.div(n, "floor"), rows = key.remainder(n).contiguous();
  at::Tensor cp = at::zeros({n + 1}, at::kLong);
  cp.narrow(0, 1, n).copy_(at::bincount(cols, {}, n).cumsum(0));
  cholmod_common cc;
  cholmod_l_start(&cc);
  cc.print = 0;
  cc.error_handler = nullptr;
  cholmod_sparse m;
  std::memset(&m, 0, sizeof(m));
  m.nrow = m.ncol = static_cast<size_t>(n);
  m.nzmax = static_cast<size_t>(rows.numel());
  m.p = cp.data_ptr<int64_t>();
  m.i = rows.data_ptr<int64_t>();
  m.stype = 1;   // upper triangle of a symmetric pattern
  m.itype = CHOLMOD_LONG;
  m.xtype = CHOLMOD_PATTERN;
  m.dtype = CHOLMOD_DOUBLE;
  m.sorted = 1;
  m.packed = 1;
  std::vector<int64_t> perm(n);
  const int ok = cholmod_l_amd(&m, nullptr, 0, reinterpret_cast<SuiteSparse_long*>(perm.data()), &cc);
  const int status = cc.status;
  cholmod_l_finish(&cc);
  TESSERA_CHECK(ok && status >= CHOLMOD_OK, Unsupported, "logdet: cholmod_l_amd failed (status ", status, ")");
  return perm;
#endif
}

}  // namespace

LduSymbolic ldu_analyze(const CsrMatrix& a) {
  const int64_t n = a.rows;
  LduSymbolic s;
  s.n = n;
  s.perm = amd_order(a);
  s.pinv.assign(n, 0);
  for (int64_t i = 0; i < n; ++i) s.pinv[s.perm[i]] = i;
  const int64_t* rp = a.row_ptr.data_ptr<int64_t>();
  const int64_t* ci = a.col_idx.data_ptr<int64_t>();
  // lower neighbours of each permuted row in the pattern of A + A^T
  std::vector<std::vector<int64_t>> lower(n);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t p = rp[r]; p < rp[r + 1]; ++p) {
      const int64_t i = s.pinv[r], j = s.pinv[ci[p]];
      if (i != j) lower[std::max(i, j)].push_back(std::min(i, j));
    }
  }
  // elimination tree (Liu's algorithm with path compression)
  std::vector<int64_t> parent(n, -1), ancestor(n, -1);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k : lower[i]) {
      int64_t t = k;
      while (ancestor[t] != -1 && ancestor[t] != i) {
        const int64_t next = ancestor[t];
        ancestor[t] = i;
        t = next;
      }
      if (ancestor[t] == -1) {
        ancestor[t] = i;
        parent[t] = i;
      }
    }
  }
  // row i of L = the row subtree: the etree paths from each lower neighbour k up to i
  std::vector<std::vector<int64_t>> col_rows(n);
  std::vector<std::vector<std::pair<int64_t, int64_t>>> row_entries(n);   // (k, local position in column k)
  std::vector<int64_t> mark(n, -1);
  for (int64_t i = 0; i < n; ++i) {
    mark[i] = i;
    for (int64_t k : lower[i]) {
      for (int64_t t = k; mark[t] != i; t = parent[t]) {
        mark[t] = i;
        row_entries[i].emplace_back(t, static_cast<int64_t>(col_rows[t].size()));
        col_rows[t].push_back(i);   // rows arrive in increasing order: columns stay sorted
      }
    }
  }
  s.col_ptr.assign(n + 1, 0);
  for (int64_t j = 0; j < n; ++j) s.col_ptr[j + 1] = s.col_ptr[j] + static_cast<int64_t>(col_rows[j].size());
  s.row_idx.reserve(s.col_ptr[n]);
  for (int64_t j = 0; j < n; ++j) s.row_idx.insert(s.row_idx.end(), col_rows[j].begin(), col_rows[j].end());
  s.row_ptr.assign(n + 1, 0);
  for (int64_t i = 0; i < n; ++i) s.row_ptr[i + 1] = s.row_ptr[i] + static_cast<int64_t>(row_entries[i].size());
  s.row_pos.reserve(s.row_ptr[n]);
  for (int64_t i = 0; i < n; ++i) {
    for (auto [k, local] : row_entries[i]) s.row_pos.push_back(s.col_ptr[k] + local);
  }
  // where each a_ab lands: (i, j) = (pinv a, pinv b)
  const int64_t nnz = rp[n];
  s.a_kind.assign(nnz, 0);
  s.a_pos.assign(nnz, 0);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t p = rp[r]; p < rp[r + 1]; ++p) {
      const int64_t i = s.pinv[r], j = s.pinv[ci[p]];
      if (i == j) {
        s.a_pos[p] = i;
        continue;
      }
      const int64_t hi = std::max(i, j), lo = std::min(i, j);
      const auto first = s.row_idx.begin() + s.col_ptr[lo], last = s.row_idx.begin() + s.col_ptr[lo + 1];
      s.a_pos[p] = std::lower_bound(first, last, hi) - s.row_idx.begin();   // (hi, lo) in column lo
      s.a_kind[p] = i > j ? 1 : 2;
    }
  }
  return s;
}

}  // namespace tessera::sla::detail
