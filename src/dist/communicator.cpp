// The parts of Communicator that are the same for every implementation.

#include "tessera/dist/communicator.h"

#include <ATen/ATen.h>

#include "dist/tensor_checks.h"
#include "tessera/core/error.h"

namespace tessera::dist {

std::vector<int64_t> Communicator::gather_counts(int64_t local_rows) {
  // counts = all_gather([local_rows])
  at::Tensor mine = at::full({1}, local_rows, at::kLong);
  at::Tensor all = all_gather(mine, std::vector<int64_t>(size(), 1));
  return std::vector<int64_t>(all.data_ptr<int64_t>(), all.data_ptr<int64_t>() + size());
}

at::Tensor Communicator::all_gather(const at::Tensor& t) {
  detail::check_comm_tensor(t, "all_gather");
  return all_gather(t, gather_counts(t.size(0)));
}

at::Tensor Communicator::reduce_scatter(const at::Tensor& t) {
  detail::check_comm_tensor(t, "reduce_scatter");
  TESSERA_CHECK(t.size(0) % size() == 0, DimensionMismatch, "reduce_scatter: ", t.size(0),
                " rows cannot be split equally over ", size(), " ranks");
  return reduce_scatter(t, std::vector<int64_t>(size(), t.size(0) / size()));
}

std::vector<at::Tensor> Communicator::neighbour_exchange(const at::Tensor& x,
                                                         const NeighbourPlan& plan) {
  return start_neighbour_exchange(x, plan)->wait();
}

std::vector<int64_t> balanced_counts(int64_t n, int parts) {
  TESSERA_CHECK(parts > 0 && n >= 0, InvalidInput, "balanced_counts: cannot split ", n, " rows into ",
                parts, " parts");
  std::vector<int64_t> counts(parts, n / parts);
  for (int64_t r = 0; r < n % parts; ++r) counts[r] += 1;  // first n mod P blocks get one more
  return counts;
}

}  // namespace tessera::dist
