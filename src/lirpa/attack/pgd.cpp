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

PgdRows pgd_rows(const BatchFn& f, const at::Tensor& lower, const at::Tensor& upper, const at::Tensor& start,
                 const at::Tensor& c, const at::Tensor& rhs, int steps, double step, double last_fraction,
                 const std::function<bool()>& expired) {
  at::Tensor l = lower.to(at::kDouble), u = upper.to(at::kDouble);
  if (l.dim() == 1) l = l.reshape({1, -1}), u = u.reshape({1, -1});
  at::Tensor width = u - l;
  at::Tensor x = at::max(at::min(start.to(at::kDouble), u), l);
  PgdRows best{x.clone(), at::full({x.size(0)}, std::numeric_limits<double>::infinity(), x.options())};
  // step size decays geometrically from `step` to `step * last_fraction` of each input's width
  double ratio = steps > 1 ? std::pow(last_fraction, 1.0 / (steps - 1)) : 1.0, eta = step;
  for (int s = 0; s <= steps; ++s) {
    at::Tensor xv = x.detach().requires_grad_(s < steps);
    at::Tensor val = conjunction_violation(f(xv), c, rhs);  // max_k (c_k y - rhs_k)
    {
      at::NoGradGuard no_grad;
      at::Tensor better = val.detach() < best.value;
      best.value = at::where(better, val.detach(), best.value);
      best.x = at::where(better.unsqueeze(1), xv.detach(), best.x);
    }
    if (s == steps || (best.value <= 0).any().item<bool>() || (expired && expired())) break;
    at::Tensor g = torch::autograd::grad({val.sum()}, {xv})[0];
    at::NoGradGuard no_grad;
    x = at::max(at::min(xv.detach() - eta * width * g.sign(), u), l);  // x <- clip(x - eta w sign(grad))
    eta *= ratio;
  }
  return best;
}

at::Tensor random_starts(const at::Tensor& lower, const at::Tensor& upper, int64_t n, uint64_t seed) {
  at::Tensor l = lower.to(at::kDouble).reshape({1, -1}), u = upper.to(at::kDouble).reshape({1, -1});
  auto gen = at::detail::createCPUGenerator(seed);
  at::Tensor x = l + (u - l) * at::rand({n, l.size(1)}, gen, at::kDouble);  // uniform in the box
  const int64_t faces = n / 2;                                                 // the last n / 2 rows
  if (faces > 0) {
    at::Tensor side = at::rand({faces, l.size(1)}, gen, at::kDouble);
    at::Tensor xf = x.narrow(0, n - faces, faces);
    // each input at its lower end (side < 1/4), exactly; its upper end (side >= 3/4); else as drawn
    xf.copy_(at::where(side < 0.25, l.expand_as(xf), at::where(side >= 0.75, u.expand_as(xf), xf)));
  }
  return x;
}

AttackResult pgd_attack(const BatchFn& f, const at::Tensor& lower, const at::Tensor& upper, const at::Tensor& c,
                        const at::Tensor& rhs, const AttackOptions& options, const at::Tensor& starts,
                        const std::function<bool()>& expired) {
  at::Tensor l = lower.to(at::kDouble).reshape({1, -1}), u = upper.to(at::kDouble).reshape({1, -1});
  at::Tensor x = at::cat({random_starts(l, u, options.restarts, options.seed), (l + u) / 2});
  if (starts.defined() && starts.numel() > 0) x = at::cat({x, starts.to(at::kDouble)});
  PgdRows r = pgd_rows(f, l, u, x, c, rhs, options.steps, options.step, 0.01, expired);  // l, u broadcast over rows
  auto [v, i] = r.value.min(0);
  return {r.x[i.item<int64_t>()].clone(), v.item<double>()};
}

}  // namespace tessera::lirpa::detail
