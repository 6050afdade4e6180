// A forward pass of a TP network that autograd can differentiate: PGD's gradient d loss/d x
// with every weight block staying on its rank. Layer k: z = h W_k^T + b_k, h' = relu(z).
// Backward, layer by layer from the output: g_z = g_h' * [z > 0], g_h = g_z W_k (this
// rank's block); a column layer's g_h is a partial sum over the ranks (all-reduce), a row
// layer's is this rank's block of its input's gradient.

#include <ATen/ATen.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include "lirpa/shard/tp_detail.h"
#include "tessera/dist/communicator.h"

namespace tessera::lirpa::detail {
namespace {

using torch::autograd::Node;
using torch::autograd::variable_list;

class TpForwardBackward final : public Node {
 public:
  TpForwardBackward(const TpNetwork& net, std::vector<at::Tensor> active, at::IntArrayRef x_shape)
      : net_(net), active_(std::move(active)), x_shape_(x_shape.vec()) {}
  std::string name() const override { return "tessera::TpForwardBackward"; }

  variable_list apply(variable_list&& grads) override {
    const auto& layers = net_.layers();
    const int64_t n = x_shape_[0];
    at::Tensor g = grads[0].defined() ? grads[0].to(at::kDouble)
                                      : at::zeros({n, net_.output_size()}, at::kDouble);
    g = same_everywhere(net_.comm(), g);  // every rank pulls back the same output gradient
    for (int k = static_cast<int>(layers.size()) - 1; k >= 0; --k) {
      const TpLayer& l = layers[k];
      if (l.relu) g = g * active_[k];                  // g_z = g_h' [z > 0]
      g = tp_pull_back(l, g, at::kDouble);             // g_h = g_z W_k (this rank's block)
      if (l.split == TpSplit::Column) {
        g = g.contiguous();
        net_.comm().all_reduce(g, dist::ReduceOp::Sum);  // sum over the ranks' output blocks
      }
    }
    return {same_everywhere(net_.comm(), g).reshape(x_shape_)};
  }

 private:
  const TpNetwork& net_;
  std::vector<at::Tensor> active_;  // per layer with a ReLU: [N, local out] double, 1 where z > 0
  std::vector<int64_t> x_shape_;
};

}  // namespace

at::Tensor tp_forward_differentiable(const TpNetwork& net, const at::Tensor& x) {
  at::Tensor h;
  std::vector<at::Tensor> active(net.layers().size());
  {
    at::NoGradGuard no_grad;
    h = x.detach().to(at::kDouble).reshape({x.size(0), -1});
    for (size_t k = 0; k < net.layers().size(); ++k) {
      const TpLayer& l = net.layers()[k];
      at::Tensor z = tp_apply(l, h, at::kDouble, false);  // h W^T (this rank's block)
      if (l.split == TpSplit::Row) {
        z = z.contiguous();
        net.comm().all_reduce(z, dist::ReduceOp::Sum);  // sum of the blocks' partial products
      }
      z = z + l.bias.to(at::kDouble);
      if (l.relu) active[k] = (z > 0).to(at::kDouble);
      h = l.relu ? z.clamp_min(0) : z;
    }
    h = same_everywhere(net.comm(), h);
  }
  if (!x.requires_grad()) return h;
  std::shared_ptr<TpForwardBackward> node(new TpForwardBackward(net, std::move(active), x.sizes()),
                                          torch::autograd::deleteNode);
  node->set_next_edges(torch::autograd::collect_next_edges(x));
  torch::autograd::set_history(h, node);
  return h;
}

}  // namespace tessera::lirpa::detail
