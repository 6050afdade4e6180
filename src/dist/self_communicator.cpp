#include "dist/self_communicator.h"

#include <ATen/ATen.h>

#include <cstdio>
#include <cstdlib>

#include "dist/tensor_checks.h"
#include "tessera/core/error.h"

namespace tessera::dist {
namespace {

class CompletedExchange final : public PendingExchange {
 public:
  explicit CompletedExchange(std::vector<at::Tensor> received) : received_(std::move(received)) {}
  std::vector<at::Tensor> wait() override { return std::move(received_); }

 private:
  std::vector<at::Tensor> received_;
};

}  // namespace

void SelfCommunicator::all_reduce(at::Tensor& t, ReduceOp) { detail::check_comm_tensor(t, "all_reduce"); }

at::Tensor SelfCommunicator::all_gather(const at::Tensor& t, const std::vector<int64_t>& counts) {
  detail::check_comm_tensor(t, "all_gather");
  detail::check_counts(counts, 1, "all_gather");
  TESSERA_CHECK(counts[0] == t.size(0), DimensionMismatch, "all_gather: count ", counts[0],
                " but the tensor has ", t.size(0), " rows");
  return t.clone();
}

at::Tensor SelfCommunicator::reduce_scatter(const at::Tensor& t, const std::vector<int64_t>& counts) {
  detail::check_comm_tensor(t, "reduce_scatter");
  detail::check_counts(counts, 1, "reduce_scatter");
  TESSERA_CHECK(counts[0] == t.size(0), DimensionMismatch, "reduce_scatter: count ", counts[0],
                " but the tensor has ", t.size(0), " rows");
  return t.clone();
}

void SelfCommunicator::broadcast(at::Tensor& t, int root) {
  detail::check_comm_tensor(t, "broadcast");
  TESSERA_CHECK(root == 0, InvalidInput, "broadcast: root ", root, " out of range for 1 rank");
}

std::unique_ptr<PendingExchange> SelfCommunicator::start_neighbour_exchange(const at::Tensor& x,
                                                                             const NeighbourPlan& plan) {
  detail::check_comm_tensor(x, "neighbour_exchange");
  TESSERA_CHECK(plan.send_index.size() == plan.peers.size() &&
                    plan.recv_rows.size() == plan.peers.size(),
                InvalidInput, "neighbour_exchange: plan has ", plan.peers.size(), " peers but ",
                plan.send_index.size(), " send lists and ", plan.recv_rows.size(), " receive counts");
  std::vector<at::Tensor> received;
  for (size_t i = 0; i < plan.peers.size(); ++i) {
    TESSERA_CHECK(plan.peers[i] == 0, InvalidInput, "neighbour_exchange: peer ", plan.peers[i],
                  " out of range for 1 rank");
    // The only peer is this process: what it sends is what it receives.
    at::Tensor rows = x.index_select(0, plan.send_index[i]);
    TESSERA_CHECK(rows.size(0) == plan.recv_rows[i], DimensionMismatch,
                  "neighbour_exchange: sending ", rows.size(0), " rows to self but expecting ",
                  plan.recv_rows[i]);
    received.push_back(rows);
  }
  return std::make_unique<CompletedExchange>(std::move(received));
}

void SelfCommunicator::abort(int code, const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(code);
}

}  // namespace tessera::dist
