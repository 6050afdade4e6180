// Construction of distributed sparse matrices and their vector distribution.

#include "tessera/sla/dist/dsparse_tensor.h"

#include <ATen/ATen.h>

#include "tessera/core/error.h"

namespace tessera::sla {

DSparseTensor DSparseTensor::build(std::shared_ptr<dist::Communicator> comm, const RowPartition& partition,
                                   const at::Tensor& local_row, const at::Tensor& global_col,
                                   const at::Tensor& values, int64_t owned) {
  TESSERA_CHECK(comm != nullptr, InvalidInput, "DSparseTensor needs a communicator");
  TESSERA_CHECK(partition.parts() == comm->size(), DimensionMismatch, "partition has ",
                partition.parts(), " parts for ", comm->size(), " ranks");
  TESSERA_CHECK(values.dim() == 1, Unsupported, "distributed matrices take one value vector, got shape ",
                values.sizes());
  DSparseTensor d;
  d.comm_ = std::move(comm);
  d.partition_ = partition;
  at::Tensor owned_global = partition.rows_of(d.comm_->rank());
  TESSERA_CHECK(owned_global.numel() == owned, DimensionMismatch, "rank ", d.comm_->rank(), " has ",
                owned, " rows but the partition gives it ", owned_global.numel());
  d.plan_ = std::make_shared<const HaloPlan>(build_halo_plan(*d.comm_, partition, owned_global, global_col));
  d.values_ = values;
  d.local_row_ = local_row.to(at::kLong);
  d.split_blocks();
  return d;
}

void DSparseTensor::split_blocks() {
  const HaloPlan& p = *plan_;
  at::Tensor col = p.local_col_idx;
  // interior: owned columns (needs no message); exterior: halo columns
  interior_entries_ = at::nonzero(col < p.owned).reshape({-1});
  exterior_entries_ = at::nonzero(col >= p.owned).reshape({-1});
  // Entries come row by row and owned columns keep their global order, so the interior
  // block is already CSR: row_ptr from the row counts, no sort of the (large) block.
  at::Tensor interior_rows = local_row_.index_select(0, interior_entries_);
  at::Tensor row_ptr = at::cat({at::zeros({1}, at::kLong),
                                at::cumsum(at::bincount(interior_rows, {}, p.owned), 0)});
  interior_ = SparseTensor::from_csr(row_ptr, col.index_select(0, interior_entries_),
                                     values_.index_select(0, interior_entries_), p.owned, p.owned);
  // halo columns are grouped by owner, not in global order: the small block goes through COO
  exterior_ = SparseTensor::from_coo(values_.index_select(0, exterior_entries_),
                                     local_row_.index_select(0, exterior_entries_),
                                     col.index_select(0, exterior_entries_) - p.owned, p.owned, p.halo);
}

DSparseTensor DSparseTensor::from_local_rows(std::shared_ptr<dist::Communicator> comm,
                                             const RowPartition& partition, const SparseTensor& local_rows) {
  TESSERA_CHECK(local_rows.cols() == partition.rows(), DimensionMismatch, "local rows have ",
                local_rows.cols(), " columns but the partition covers ", partition.rows(), " rows");
  return build(std::move(comm), partition, local_rows.row_indices(), local_rows.col_idx().to(at::kLong),
               local_rows.values(), local_rows.rows());
}

DSparseTensor DSparseTensor::from_global(std::shared_ptr<dist::Communicator> comm,
                                         const RowPartition& partition, const SparseTensor& global) {
  TESSERA_CHECK(global.rows() == partition.rows() && global.cols() == partition.rows(), DimensionMismatch,
                "global matrix is ", global.rows(), " x ", global.cols(), " but the partition covers ",
                partition.rows(), " rows");
  at::Tensor mine = partition.rows_of(comm->rank());
  // entries of my rows, in ascending global row order; local row = rank of the row among mine
  at::Tensor row = global.row_indices();
  at::Tensor local_of_global = at::full({global.rows()}, -1, at::kLong);
  local_of_global.index_copy_(0, mine, at::arange(mine.numel(), at::kLong));
  at::Tensor local_row_all = local_of_global.index_select(0, row);
  at::Tensor entries = at::nonzero(local_row_all >= 0).reshape({-1});
  at::Tensor local_row = local_row_all.index_select(0, entries);
  at::Tensor order = std::get<1>(at::sort(local_row, /*stable=*/true, 0, false));
  entries = entries.index_select(0, order);
  return build(std::move(comm), partition, local_row.index_select(0, order),
               global.col_idx().to(at::kLong).index_select(0, entries),
               global.values().index_select(-1, entries), mine.numel());
}

int64_t DSparseTensor::global_nnz() const {
  at::Tensor n = at::full({1}, values_.numel(), at::kLong);
  comm_->all_reduce(n, dist::ReduceOp::Sum);
  return n.item<int64_t>();
}

DSparseTensor DSparseTensor::with_values(const at::Tensor& values) const {
  TESSERA_CHECK(values.sizes() == values_.sizes(), DimensionMismatch, "with_values: expected shape ",
                values_.sizes(), ", got ", values.sizes());
  DSparseTensor d = *this;
  d.values_ = values;
  d.split_blocks();
  return d;
}

at::Tensor DSparseTensor::diagonal() const {
  // a_ii is stored where local column == local row
  at::Tensor on_diag = at::nonzero(plan_->local_col_idx == local_row_).reshape({-1});
  return at::zeros({plan_->owned}, values_.options())
      .index_add(0, local_row_.index_select(0, on_diag), values_.index_select(0, on_diag));
}

at::Tensor DSparseTensor::scatter(const at::Tensor& global, bool from_root, int root) const {
  at::Tensor g = global;
  if (from_root) {
    // broadcast the shape, then the data
    at::Tensor shape = at::zeros({2}, at::kLong);
    if (comm_->rank() == root) {
      shape[0] = global.size(0);
      shape[1] = global.dim() > 1 ? global.size(1) : 0;
    }
    comm_->broadcast(shape, root);
    std::vector<int64_t> dims{shape[0].item<int64_t>()};
    if (shape[1].item<int64_t>() > 0) dims.push_back(shape[1].item<int64_t>());
    g = comm_->rank() == root ? global.contiguous().clone() : at::empty(dims, values_.options());
    comm_->broadcast(g, root);
  }
  TESSERA_CHECK(g.size(0) == rows(), DimensionMismatch, "scatter: vector has ", g.size(0),
                " rows, matrix has ", rows());
  return g.index_select(0, plan_->local_to_global.narrow(0, 0, plan_->owned));
}

at::Tensor DSparseTensor::gather_all(const at::Tensor& owned) const {
  TESSERA_CHECK(owned.size(0) == plan_->owned, DimensionMismatch, "gather_all: rank ", comm_->rank(),
                " holds ", plan_->owned, " rows, got ", owned.size(0));
  std::vector<int64_t> counts = partition_.counts();
  at::Tensor all = comm_->all_gather(owned.contiguous(), counts);
  if (partition_.is_contiguous()) return all;
  // rank-order concatenation -> global order
  std::vector<at::Tensor> ids;
  for (int r = 0; r < partition_.parts(); ++r) ids.push_back(partition_.rows_of(r));
  std::vector<int64_t> shape = all.sizes().vec();
  return at::zeros(shape, all.options()).index_copy(0, at::cat(ids), all);
}

}  // namespace tessera::sla
