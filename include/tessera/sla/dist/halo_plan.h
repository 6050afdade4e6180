#pragma once
/// @file halo_plan.h
/// Local numbering and neighbour lists of one rank's rows of a distributed matrix.
///
/// Local numbering is owned-then-halo: owned rows 0..owned-1 in ascending global order,
/// then the halo (columns referenced by owned rows but owned elsewhere), grouped by owner
/// rank in ascending order and by global id within a group. The halo block of peer i
/// occupies slots [halo_offsets[i], halo_offsets[i+1]) after the owned rows.
///
/// @code
///   HaloPlan plan = build_halo_plan(*comm, partition, partition.rows_of(rank), global_cols);
///   // plan.exchange sends x_owned[plan.exchange.send_index[i]] to plan.exchange.peers[i]
///   // and receives plan.exchange.recv_rows[i] halo values from it
/// @endcode

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "tessera/dist/communicator.h"
#include "tessera/sla/dist/partition.h"

namespace tessera::sla {

struct HaloPlan {
  int64_t owned = 0;               ///< rows owned by this rank
  int64_t halo = 0;                ///< halo columns (received from peers)
  at::Tensor local_to_global;      ///< int64 [owned + halo]
  at::Tensor local_col_idx;        ///< int64 [nnz_local]: the given global columns, renumbered
  dist::NeighbourPlan exchange;    ///< owned values -> peers' halo slots
  std::vector<int64_t> halo_offsets;  ///< [peers + 1], start of each peer's halo block

  /// Values sent plus received by one exchange of `row_bytes`-byte rows.
  int64_t exchange_bytes(int64_t row_bytes) const;
};

/// Collective over `comm`. `owned_global`: sorted int64 global ids of this rank's rows
/// (must be partition.rows_of(rank)); `global_col_idx`: int64 global column of every
/// stored entry of those rows. Ranks learn who needs what from an all-gather of request
/// counts and one neighbour exchange of the requested ids.
HaloPlan build_halo_plan(dist::Communicator& comm, const RowPartition& partition,
                         const at::Tensor& owned_global, const at::Tensor& global_col_idx);

}  // namespace tessera::sla
