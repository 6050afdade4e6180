// Batched PGD inside many small boxes at once (one start per box): the counterexample
// search of input-splitting branch and bound on its worst sub-domains; see bab.h.

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <cmath>
#include <limits>

#include "lirpa/attack/pgd.h"
#include "lirpa/bab/bab.h"

namespace tessera::lirpa::detail {

at::Tensor box_attack(const ReluNet& net, const at::Tensor& xl, const at::Tensor& xu, const at::Tensor& start,
                      const at::Tensor& c, const at::Tensor& rhs, int steps) {
  at::Tensor width = xu - xl;
  at::Tensor x = at::max(at::min(start, xu), xl);
  at::Tensor best = x.clone();
  at::Tensor best_val = at::full({x.size(0)}, std::numeric_limits<double>::infinity(), x.options());
  // step from 1/4 of each box's width down to 1/100 of it
  double ratio = steps > 1 ? std::pow(0.04, 1.0 / (steps - 1)) : 1.0, eta = 0.25;
  for (int s = 0; s <= steps; ++s) {
    at::Tensor xv = x.detach().requires_grad_(s < steps);
    at::Tensor val = conjunction_violation(net.forward(xv), c, rhs);  // max_k (c_k y - rhs_k)
    {
      at::NoGradGuard no_grad;
      at::Tensor better = val.detach() < best_val;
      best_val = at::where(better, val.detach(), best_val);
      best = at::where(better.unsqueeze(1), xv.detach(), best);
    }
    if (s == steps || (best_val <= 0).any().item<bool>()) break;
    at::Tensor g = torch::autograd::grad({val.sum()}, {xv})[0];
    at::NoGradGuard no_grad;
    x = at::max(at::min(xv.detach() - eta * width * g.sign(), xu), xl);  // x <- clip(x - eta w sign(grad))
    eta *= ratio;
  }
  return best;
}

}  // namespace tessera::lirpa::detail
