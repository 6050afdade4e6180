// alpha-CROWN on batches of input boxes: Adam on the ReLU lower slopes (alpha, in [0, 1])
// maximising the final lower bound; every value of them gives a sound bound, so the best per
// row is kept.

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <cmath>

#include "batch_crown.h"

namespace tessera::lirpa::detail {
namespace {

struct Adam {
  at::Tensor m, v;
  // m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  p += lr m_hat / (sqrt(v_hat) + eps)  (ascent)
  at::Tensor step(const at::Tensor& p, const at::Tensor& g, double lr, int t) {
    constexpr double b1 = 0.9, b2 = 0.999;
    if (!m.defined()) m = at::zeros_like(g), v = at::zeros_like(g);
    m = b1 * m + (1 - b1) * g;
    v = b2 * v + (1 - b2) * g * g;
    double c1 = 1 - std::pow(b1, t), c2 = 1 - std::pow(b2, t);
    return p + lr * (m / c1) / ((v / c2).sqrt() + 1e-8);
  }
};

// CROWN's adaptive slopes per row, where no inherited alpha of the right shape exists.
void init_params(const DomainBatch& d, const LayerBounds& bounds, int64_t k, Relaxation& relax) {
  size_t hidden = bounds.lower.size();
  relax.alpha.resize(hidden);
  for (size_t j = 0; j < hidden; ++j) {
    const at::Tensor& l = bounds.lower[j];
    const at::Tensor& u = bounds.upper[j];
    std::vector<int64_t> shape{d.size(), k, l.size(1)};
    if (!relax.alpha[j].defined() || relax.alpha[j].sizes().vec() != shape)
      relax.alpha[j] = (u > -l).to(at::kDouble).unsqueeze(1).expand(shape).contiguous();
  }
}

}  // namespace

FinalBound optimise_final_bound(const ReluNet& net, const DomainBatch& d, const LayerBounds& bounds,
                                const at::Tensor& c, const at::Tensor& rhs, Relaxation& relax,
                                const OptimiseOptions& options) {
  init_params(d, bounds, c.size(0), relax);
  std::vector<at::Tensor*> params;
  for (auto& a : relax.alpha) params.push_back(&a);
  std::vector<Adam> adam(params.size());
  at::Tensor best;
  double decay = 1;
  for (int it = 0; it < options.iterations; ++it) {
    std::vector<at::Tensor> leaves;
    for (at::Tensor* p : params) *p = p->detach().requires_grad_(true), leaves.push_back(*p);
    FinalBound fb = final_bound(net, d, bounds, c, rhs, relax);
    at::Tensor lbd = fb.lb.detach();
    best = best.defined() ? at::max(best, lbd) : lbd;  // best per row
    bool verified = (std::get<0>(best.max(1)) > 0).all().item<bool>();  // every domain proven
    if (verified || leaves.empty()) break;
    if (options.stop && options.stop()) break;  // the timeout is near
    at::Tensor finite = at::isfinite(fb.lb);
    at::Tensor objective = at::where(finite, fb.lb, at::zeros_like(fb.lb)).sum();  // maximise sum of bounds
    auto grads = torch::autograd::grad({objective}, leaves, {}, false, false, true);
    at::NoGradGuard no_grad;
    for (size_t i = 0; i < params.size(); ++i) {
      if (!grads[i].defined()) continue;
      *params[i] = adam[i].step(leaves[i].detach(), grads[i], options.lr_alpha * decay, it + 1).clamp(0, 1);
    }
    decay *= options.lr_decay;
  }
  at::NoGradGuard no_grad;
  for (at::Tensor* p : params) *p = p->detach();
  FinalBound fb = final_bound(net, d, bounds, c, rhs, relax);
  fb.lb = best.defined() ? at::max(best, fb.lb) : fb.lb;
  return fb;
}

}  // namespace tessera::lirpa::detail
