// DSparseTensor::scatter_from_root: the root sends each rank its rows; no rank but the
// root ever holds the global matrix.

#include <ATen/ATen.h>

#include "tessera/core/error.h"
#include "tessera/sla/dist/dsparse_tensor.h"

namespace tessera::sla {

DSparseTensor DSparseTensor::scatter_from_root(std::shared_ptr<dist::Communicator> comm,
                                               const RowPartition& partition, const SparseTensor& global,
                                               int root) {
  const int rank = comm->rank(), size = comm->size();
  TESSERA_CHECK(partition.parts() == size, DimensionMismatch, "partition has ", partition.parts(),
                " parts for ", size, " ranks");
  const bool is_root = rank == root;
  // dtype code: 0 float32, 1 float64 (sent from the root)
  at::Tensor meta = at::zeros({1}, at::kLong);
  if (is_root) {
    TESSERA_CHECK(global.rows() == partition.rows() && global.cols() == partition.rows(), DimensionMismatch,
                  "global matrix is ", global.rows(), " x ", global.cols(), " but the partition covers ",
                  partition.rows(), " rows");
    meta[0] = global.dtype() == at::kDouble ? 1 : 0;
  }
  comm->broadcast(meta, root);
  const auto dtype = meta[0].item<int64_t>() == 1 ? at::kDouble : at::kFloat;

  // root: for each rank, the entry positions and row lengths of its rows
  dist::NeighbourPlan entries, lengths;
  at::Tensor row_len, cols, vals;
  if (is_root) {
    row_len = (global.row_ptr().narrow(0, 1, global.rows()) - global.row_ptr().narrow(0, 0, global.rows()))
                  .to(at::kLong).contiguous();
    cols = global.col_idx().to(at::kLong).contiguous();
    vals = global.values().detach().to(dtype).contiguous();
    at::Tensor row_of_entry = global.row_indices();
    at::Tensor owner_of_entry = partition.owner_of(row_of_entry);
    for (int r = 0; r < size; ++r) {
      entries.peers.push_back(r);
      // entries of rank r's rows, in ascending global row order (CSR order already is)
      entries.send_index.push_back(at::nonzero(owner_of_entry == r).reshape({-1}));
      lengths.peers.push_back(r);
      lengths.send_index.push_back(partition.rows_of(r));
    }
  }
  // every rank receives from the root: first its row lengths
  const int64_t owned = partition.counts()[rank];
  auto add_root_peer = [&](dist::NeighbourPlan& plan, int64_t rows) {
    if (is_root) {
      plan.recv_rows.assign(size, 0);
      plan.recv_rows[rank] = rows;
    } else {
      plan.peers = {root};
      plan.send_index = {at::zeros({0}, at::kLong)};
      plan.recv_rows = {rows};
    }
  };
  add_root_peer(lengths, owned);
  at::Tensor dummy_len = at::zeros({0}, at::kLong);
  auto len_in = comm->neighbour_exchange(is_root ? row_len : dummy_len, lengths);
  at::Tensor my_len = is_root ? len_in[rank] : len_in[0];
  const int64_t nnz = my_len.sum().item<int64_t>();
  add_root_peer(entries, nnz);
  auto col_in = comm->neighbour_exchange(is_root ? cols : at::zeros({0}, at::kLong), entries);
  auto val_in = comm->neighbour_exchange(is_root ? vals : at::zeros({0}, dtype), entries);
  at::Tensor my_cols = is_root ? col_in[rank] : col_in[0];
  at::Tensor my_vals = is_root ? val_in[rank] : val_in[0];
  at::Tensor local_row = at::repeat_interleave(at::arange(owned, at::kLong), my_len);
  return build(std::move(comm), partition, local_row, my_cols, my_vals, owned);
}

}  // namespace tessera::sla
