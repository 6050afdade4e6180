#pragma once
// Values for the JSON reports: tensors as lists, and every rank's value of a per-rank
// figure (memory) in sharded runs.

#include <ATen/ATen.h>

#include <vector>

#include "tessera/dist/communicator.h"

namespace tessera::app {

/// A tensor's values as a list of doubles.
inline std::vector<double> to_vector(const at::Tensor& t) {
  at::Tensor d = t.to(at::kDouble).contiguous();
  return {d.data_ptr<double>(), d.data_ptr<double>() + d.numel()};
}

/// Every rank's value of `mine`, in rank order (a collective).
inline std::vector<int64_t> per_rank(dist::Communicator& comm, int64_t mine) {
  at::Tensor all = comm.all_gather(at::full({1}, mine, at::kLong), std::vector<int64_t>(comm.size(), 1));
  return {all.data_ptr<int64_t>(), all.data_ptr<int64_t>() + all.numel()};
}

}  // namespace tessera::app
