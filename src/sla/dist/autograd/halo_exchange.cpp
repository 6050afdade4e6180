#include "sla/dist/autograd/halo_exchange.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

namespace tessera::sla::detail {
namespace {

using torch::autograd::Node;
using torch::autograd::variable_list;

std::vector<int64_t> with_rows(const at::Tensor& like, int64_t rows) {
  std::vector<int64_t> shape = like.sizes().vec();
  shape[0] = rows;
  return shape;
}

// Concatenates the per-peer blocks received into one [rows, ...] tensor.
at::Tensor concat_rows(const std::vector<at::Tensor>& blocks, const at::Tensor& like, int64_t rows) {
  if (blocks.empty()) return at::zeros(with_rows(like, rows), like.options());
  return at::cat(blocks, 0);
}

class HaloForwardBackward final : public Node {
 public:
  HaloForwardBackward(std::shared_ptr<dist::Communicator> comm, std::shared_ptr<const HaloPlan> plan)
      : comm_(std::move(comm)), plan_(std::move(plan)) {}
  std::string name() const override { return "tessera::HaloForwardBackward"; }
  variable_list apply(variable_list&& grads) override {
    at::Tensor g = grads[0].defined() ? grads[0] : at::zeros(shape_, options_);
    return {halo_reverse(comm_, plan_, g)};  // transpose; differentiable for double backward
  }
  std::vector<int64_t> shape_;
  at::TensorOptions options_;

 private:
  std::shared_ptr<dist::Communicator> comm_;
  std::shared_ptr<const HaloPlan> plan_;
};

class HaloReverseBackward final : public Node {
 public:
  HaloReverseBackward(std::shared_ptr<dist::Communicator> comm, std::shared_ptr<const HaloPlan> plan)
      : comm_(std::move(comm)), plan_(std::move(plan)) {}
  std::string name() const override { return "tessera::HaloReverseBackward"; }
  variable_list apply(variable_list&& grads) override {
    at::Tensor g = grads[0].defined() ? grads[0] : at::zeros(shape_, options_);
    return {halo_forward(comm_, plan_, g)};
  }
  std::vector<int64_t> shape_;
  at::TensorOptions options_;

 private:
  std::shared_ptr<dist::Communicator> comm_;
  std::shared_ptr<const HaloPlan> plan_;
};

template <typename NodeT>
void attach(at::Tensor& result, const at::Tensor& input, std::shared_ptr<NodeT> node) {
  node->shape_ = result.sizes().vec();
  node->options_ = result.options();
  node->set_next_edges(torch::autograd::collect_next_edges(input));
  torch::autograd::set_history(result, node);
}

}  // namespace

dist::NeighbourPlan reverse_plan(const HaloPlan& plan) {
  dist::NeighbourPlan reverse;
  reverse.peers = plan.exchange.peers;
  for (size_t i = 0; i < plan.exchange.peers.size(); ++i) {
    // send my halo block of peer i back to it; receive what it holds of my send rows
    reverse.send_index.push_back(
        at::arange(plan.halo_offsets[i], plan.halo_offsets[i + 1], at::kLong));
    reverse.recv_rows.push_back(plan.exchange.send_index[i].numel());
  }
  return reverse;
}

at::Tensor halo_forward_raw(dist::Communicator& comm, const HaloPlan& plan, const at::Tensor& x_owned) {
  auto received = comm.neighbour_exchange(x_owned.contiguous(), plan.exchange);
  return concat_rows(received, x_owned, plan.halo);
}

at::Tensor halo_reverse_raw(dist::Communicator& comm, const HaloPlan& plan, const at::Tensor& halo) {
  auto received = comm.neighbour_exchange(halo.contiguous(), reverse_plan(plan));
  // owned_j += contributions to j from every peer that holds j in its halo
  at::Tensor owned = at::zeros(with_rows(halo, plan.owned), halo.options());
  for (size_t i = 0; i < received.size(); ++i) owned.index_add_(0, plan.exchange.send_index[i], received[i]);
  return owned;
}

at::Tensor halo_forward(const std::shared_ptr<dist::Communicator>& comm,
                        const std::shared_ptr<const HaloPlan>& plan, const at::Tensor& x_owned,
                        std::unique_ptr<dist::PendingExchange> pending) {
  at::Tensor x = x_owned.detach().contiguous();
  if (!pending) pending = comm->start_neighbour_exchange(x, plan->exchange);
  at::Tensor halo = concat_rows(pending->wait(), x, plan->halo);
  if (x_owned.requires_grad()) {
    std::shared_ptr<HaloForwardBackward> node(new HaloForwardBackward(comm, plan), torch::autograd::deleteNode);
    attach(halo, x_owned, node);
  }
  return halo;
}

at::Tensor halo_reverse(const std::shared_ptr<dist::Communicator>& comm,
                        const std::shared_ptr<const HaloPlan>& plan, const at::Tensor& halo) {
  at::Tensor owned = halo_reverse_raw(*comm, *plan, halo.detach());
  if (halo.requires_grad()) {
    std::shared_ptr<HaloReverseBackward> node(new HaloReverseBackward(comm, plan), torch::autograd::deleteNode);
    attach(owned, halo, node);
  }
  return owned;
}

}  // namespace tessera::sla::detail
