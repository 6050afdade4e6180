#pragma once
// The single-process communicator: every collective is the identity (or a copy).

#include "tessera/dist/communicator.h"

namespace tessera::dist {

class SelfCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string kind() const override { return "self"; }

  void all_reduce(at::Tensor& t, ReduceOp op) override;
  at::Tensor all_gather(const at::Tensor& t, const std::vector<int64_t>& counts) override;
  at::Tensor reduce_scatter(const at::Tensor& t, const std::vector<int64_t>& counts) override;
  void broadcast(at::Tensor& t, int root) override;
  std::unique_ptr<PendingExchange> start_neighbour_exchange(const at::Tensor& x,
                                                             const NeighbourPlan& plan) override;
  void barrier() override {}
  [[noreturn]] void abort(int code, const std::string& message) override;

  using Communicator::all_gather;
  using Communicator::reduce_scatter;
};

}  // namespace tessera::dist
