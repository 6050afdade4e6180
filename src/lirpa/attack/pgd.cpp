// PGD with random restarts; see pgd.h.

#include "pgd.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/autograd/autograd.h>

#include <cmath>
#include <limits>

namespace tessera::lirpa::detail {

at::Tensor conjunction_violation(const at::Tensor& y, const at::Tensor& c, const at::Tensor& rhs) {
  if (c.size(0) == 0) return at::full({y.size(0)}, -std::numeric_limits<double>::infinity(), y.options());
  at::Tensor g = at::matmul(y, c.to(y.scalar_type()).t()) - rhs.to(y.scalar_type());  // g = C y - rhs
  return std::get<0>(g.max(1));
}

AttackResult pgd_attack(const BatchFn& f, const at::Tensor& lower, const at::Tensor& upper, const at::Tensor& c,
                        const at::Tensor& rhs, const AttackOptions& options, const at::Tensor& starts,
                        const std::function<bool()>& expired) {
  at::Tensor l = lower.to(at::kDouble).reshape({1, -1}), u = upper.to(at::kDouble).reshape({1, -1});
  at::Tensor width = u - l;
  auto gen = at::detail::createCPUGenerator(options.seed);
  at::Tensor x = l + width * at::rand({options.restarts, l.size(1)}, gen, at::kDouble);  // uniform in the box
  x = at::cat({x, (l + u) / 2});
  if (starts.defined() && starts.numel() > 0) x = at::cat({x, at::max(at::min(starts.to(at::kDouble), u), l)});
  AttackResult best{x[0].clone(), std::numeric_limits<double>::infinity()};
  auto keep_best = [&](const at::Tensor& pts, const at::Tensor& val) {
    auto [v, i] = val.min(0);
    double vb = v.item<double>();
    if (vb < best.value) best = {pts[i.item<int64_t>()].detach().clone(), vb};
  };
  // step size decays geometrically from `step` to step/100 of each input's width
  double ratio = options.steps > 1 ? std::pow(0.01, 1.0 / (options.steps - 1)) : 1.0;
  double eta = options.step;
  for (int s = 0; s <= options.steps; ++s) {
    at::Tensor xv = x.detach().requires_grad_(true);
    at::Tensor val = conjunction_violation(f(xv), c, rhs);
    keep_best(xv, val.detach());
    if (best.value <= 0 || s == options.steps || (expired && expired())) break;
    at::Tensor g = torch::autograd::grad({val.sum()}, {xv})[0];
    at::NoGradGuard no_grad;
    x = at::max(at::min(xv.detach() - eta * width * g.sign(), u), l);  // x <- clip(x - eta w sign(grad))
    eta *= ratio;
  }
  return best;
}

}  // namespace tessera::lirpa::detail
