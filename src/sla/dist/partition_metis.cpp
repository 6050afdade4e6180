// METIS k-way partition of the symmetrised adjacency graph of A.

#include <ATen/ATen.h>
#include <metis.h>

#include "tessera/core/error.h"
#include "tessera/sla/dist/partition.h"
#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla {

RowPartition RowPartition::metis(const SparseTensor& a, int parts) {
  TESSERA_CHECK(a.rows() == a.cols(), InvalidInput, "METIS partition needs a square matrix, got ",
                a.rows(), " x ", a.cols());
  TESSERA_CHECK(parts > 0, InvalidInput, "a partition needs at least one part, got ", parts);
  if (parts == 1) return contiguous(a.rows(), 1);
  TESSERA_CHECK(parts <= a.rows(), InvalidInput, "METIS cannot split ", a.rows(), " rows into ",
                parts, " parts; use a contiguous partition (it allows empty parts)");
  const int64_t n = a.rows();
  // Edges of A + A^T without the diagonal: (i, j) and (j, i) for every stored a_ij, i != j.
  at::Tensor rows = a.row_indices();
  at::Tensor cols = a.col_idx().to(at::kLong);
  at::Tensor off = rows != cols;
  at::Tensor src = at::cat({rows.masked_select(off), cols.masked_select(off)});
  at::Tensor dst = at::cat({cols.masked_select(off), rows.masked_select(off)});
  at::Tensor key = std::get<0>(at::sort(src * n + dst));  // sort by (src, dst)
  key = std::get<0>(at::unique_consecutive(key));
  at::Tensor edge_src = at::div(key, n, "floor");
  at::Tensor edge_dst = key - edge_src * n;
  TESSERA_CHECK(key.numel() < std::numeric_limits<idx_t>::max(), Unsupported,
                "graph too large for METIS's ", sizeof(idx_t) * 8, "-bit indices");
  // xadj = prefix sum of degrees
  at::Tensor degree = at::bincount(edge_src, {}, n);
  at::Tensor xadj = at::cat({at::zeros({1}, at::kLong), at::cumsum(degree, 0)}).to(at::kInt).contiguous();
  at::Tensor adjncy = edge_dst.to(at::kInt).contiguous();
  static_assert(sizeof(idx_t) == sizeof(int32_t), "METIS built with 32-bit idx_t expected");

  idx_t nvtxs = static_cast<idx_t>(n), ncon = 1, nparts = parts, objval = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1;  // deterministic across runs and ranks
  std::vector<idx_t> part(n, 0);
  int status = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data_ptr<int32_t>(), adjncy.data_ptr<int32_t>(),
                                   nullptr, nullptr, nullptr, &nparts, nullptr, nullptr, options,
                                   &objval, part.data());
  TESSERA_CHECK(status == METIS_OK, Unsupported, "METIS_PartGraphKway failed with status ", status);
  at::Tensor owner = at::tensor(std::vector<int64_t>(part.begin(), part.end()), at::kLong);
  return from_owner(owner, parts);
}

}  // namespace tessera::sla
