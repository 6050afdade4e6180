#include "tessera/sla/dist/halo_plan.h"

#include <ATen/ATen.h>

#include "tessera/core/error.h"

namespace tessera::sla {
namespace {

std::vector<int64_t> to_vector(const at::Tensor& t) {
  at::Tensor c = t.to(at::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

}  // namespace

int64_t HaloPlan::exchange_bytes(int64_t row_bytes) const {
  int64_t rows = 0;
  for (const auto& s : exchange.send_index) rows += s.numel();
  for (int64_t r : exchange.recv_rows) rows += r;
  return rows * row_bytes;
}

HaloPlan build_halo_plan(dist::Communicator& comm, const RowPartition& partition,
                         const at::Tensor& owned_global, const at::Tensor& global_col_idx) {
  const int rank = comm.rank(), size = comm.size();
  TESSERA_CHECK(partition.parts() == size, DimensionMismatch, "partition has ", partition.parts(),
                " parts but the communicator has ", size, " ranks");
  const int64_t n = partition.rows();
  at::Tensor owned = owned_global.to(at::kLong).contiguous();
  at::Tensor cols = global_col_idx.to(at::kLong).contiguous();

  HaloPlan plan;
  plan.owned = owned.numel();
  at::Tensor col_owner = partition.owner_of(cols);
  at::Tensor is_owned = col_owner == rank;

  // halo = distinct foreign columns, ordered by (owner, global id): key = owner n + g
  at::Tensor foreign_key = (col_owner * n + cols).masked_select(at::logical_not(is_owned));
  at::Tensor halo_key = std::get<0>(at::unique_consecutive(std::get<0>(at::sort(foreign_key))));
  at::Tensor halo_owner = at::div(halo_key, n, "floor");
  at::Tensor halo_global = halo_key - halo_owner * n;
  plan.halo = halo_key.numel();
  plan.local_to_global = at::cat({owned, halo_global});

  // local column = position among owned rows, or owned + position in the halo
  at::Tensor owned_pos = at::searchsorted(owned, cols);
  at::Tensor halo_pos = at::searchsorted(halo_key, col_owner * n + cols) + plan.owned;
  plan.local_col_idx = at::where(is_owned, owned_pos, halo_pos);
  if (cols.numel() > 0 && plan.owned > 0) {
    at::Tensor found = owned.index_select(0, owned_pos.clamp_max(plan.owned - 1));
    TESSERA_CHECK(at::equal(found.masked_select(is_owned), cols.masked_select(is_owned)), InvalidInput,
                  "rank ", rank, ": a column owned by this rank is not among its rows");
  }

  // requests[r][q] = halo entries rank r needs from rank q (all ranks learn the matrix)
  at::Tensor mine = at::bincount(halo_owner, {}, size).to(at::kLong).reshape({1, size}).contiguous();
  at::Tensor requests = comm.all_gather(mine, std::vector<int64_t>(size, 1));
  std::vector<int64_t> need_from = to_vector(requests[rank]);
  std::vector<int64_t> wanted_by = to_vector(requests.select(1, rank));

  // peers: everyone I need from or who needs from me, ascending
  dist::NeighbourPlan ask;
  std::vector<int64_t> start_of(size + 1, 0);
  for (int q = 0; q < size; ++q) start_of[q + 1] = start_of[q] + need_from[q];
  for (int q = 0; q < size; ++q) {
    if (q == rank || (need_from[q] == 0 && wanted_by[q] == 0)) continue;
    ask.peers.push_back(q);
    ask.send_index.push_back(at::arange(start_of[q], start_of[q + 1], at::kLong));
    ask.recv_rows.push_back(wanted_by[q]);
  }
  TESSERA_CHECK(need_from[rank] == 0, InvalidInput, "rank ", rank, " lists its own rows as halo");
  // each peer tells me which of my rows it needs, in its halo order
  std::vector<at::Tensor> asked = comm.neighbour_exchange(halo_global.contiguous(), ask);

  plan.exchange.peers = ask.peers;
  plan.halo_offsets.assign(1, 0);
  for (size_t i = 0; i < ask.peers.size(); ++i) {
    const int q = ask.peers[i];
    at::Tensor send_pos = at::searchsorted(owned, asked[i]);
    if (asked[i].numel() > 0) {
      TESSERA_CHECK(plan.owned > 0 && at::equal(owned.index_select(0, send_pos.clamp_max(plan.owned - 1)),
                                                asked[i]),
                    DistributedError, "rank ", q, " asked rank ", rank, " for rows it does not own");
    }
    plan.exchange.send_index.push_back(send_pos);
    plan.exchange.recv_rows.push_back(need_from[q]);
    plan.halo_offsets.push_back(plan.halo_offsets.back() + need_from[q]);
  }
  return plan;
}

}  // namespace tessera::sla
