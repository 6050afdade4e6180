#pragma once
// Every rank's value of a per-rank figure (memory), for the JSON reports of sharded runs.

#include <ATen/ATen.h>

#include <vector>

#include "tessera/dist/communicator.h"

namespace tessera::app {

/// Every rank's value of `mine`, in rank order (a collective).
inline std::vector<int64_t> per_rank(dist::Communicator& comm, int64_t mine) {
  at::Tensor all = comm.all_gather(at::full({1}, mine, at::kLong), std::vector<int64_t>(comm.size(), 1));
  return {all.data_ptr<int64_t>(), all.data_ptr<int64_t>() + all.numel()};
}

}  // namespace tessera::app
