// Autograd nodes for collectives: each backward is the transpose collective.

#include "tessera/dist/differentiable.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include "tessera/dist/communicator.h"

namespace tessera::dist::differentiable {
namespace {

using torch::autograd::Node;
using torch::autograd::variable_list;

// d loss / d x_r = block r of sum_q (d loss_q / d full): a reduce-scatter.
class AllGatherBackward final : public Node {
 public:
  AllGatherBackward(std::shared_ptr<Communicator> comm, std::vector<int64_t> counts)
      : comm_(std::move(comm)), counts_(std::move(counts)) {}
  std::string name() const override { return "tessera::AllGatherBackward"; }

  variable_list apply(variable_list&& grads) override {
    at::Tensor g = grads[0].defined() ? grads[0].contiguous() : at::Tensor();
    // A rank whose loss did not use the gathered tensor still joins the collective.
    if (!g.defined()) g = at::zeros(shape_, options_);
    return {comm_->reduce_scatter(g, counts_)};
  }

  std::vector<int64_t> shape_;
  at::TensorOptions options_;

 private:
  std::shared_ptr<Communicator> comm_;
  std::vector<int64_t> counts_;
};

// d loss / d x_r = sum_q d loss_q / d total: an all-reduce.
class AllReduceSumBackward final : public Node {
 public:
  explicit AllReduceSumBackward(std::shared_ptr<Communicator> comm) : comm_(std::move(comm)) {}
  std::string name() const override { return "tessera::AllReduceSumBackward"; }

  variable_list apply(variable_list&& grads) override {
    at::Tensor g = grads[0].defined() ? grads[0].clone().contiguous() : at::zeros(shape_, options_);
    comm_->all_reduce(g, ReduceOp::Sum);
    return {g};
  }

  std::vector<int64_t> shape_;
  at::TensorOptions options_;

 private:
  std::shared_ptr<Communicator> comm_;
};

// Connects `result` to `node`, whose input is `x`, when x takes part in autograd.
template <typename NodeT>
void attach(at::Tensor& result, const at::Tensor& x, std::shared_ptr<NodeT> node) {
  node->shape_ = result.sizes().vec();
  node->options_ = result.options();
  node->set_next_edges(torch::autograd::collect_next_edges(x));
  torch::autograd::set_history(result, node);
}

}  // namespace

at::Tensor all_gather(const std::shared_ptr<Communicator>& comm, const at::Tensor& x) {
  at::Tensor input = x.detach().contiguous();
  std::vector<int64_t> counts = comm->gather_counts(input.size(0));
  at::Tensor result = comm->all_gather(input, counts);
  if (x.requires_grad()) {
    std::shared_ptr<AllGatherBackward> node(new AllGatherBackward(comm, counts),
                                            torch::autograd::deleteNode);
    attach(result, x, node);
  }
  return result;
}

at::Tensor all_reduce_sum(const std::shared_ptr<Communicator>& comm, const at::Tensor& x) {
  at::Tensor result = x.detach().clone().contiguous();
  comm->all_reduce(result, ReduceOp::Sum);
  if (x.requires_grad()) {
    std::shared_ptr<AllReduceSumBackward> node(new AllReduceSumBackward(comm),
                                               torch::autograd::deleteNode);
    attach(result, x, node);
  }
  return result;
}

at::Tensor replicate(const std::shared_ptr<Communicator>& comm, const at::Tensor& x) {
  at::Tensor result = x.detach().clone();
  if (x.requires_grad()) {
    std::shared_ptr<AllReduceSumBackward> node(new AllReduceSumBackward(comm), torch::autograd::deleteNode);
    attach(result, x, node);
  }
  return result;
}

}  // namespace tessera::dist::differentiable
