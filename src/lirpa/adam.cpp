// The one projected Adam step of alpha- and beta-CROWN (descent on the loss -bound), per
// element in one pass over p, g, m and v:
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   p = clamp(p - (lr / (1 - b1^t)) m / (sqrt(v / (1 - b2^t)) + eps), 0, upper)
// A slot not yet stepped (m, v undefined) counts as zeros and is created by the step. The
// slopes of CNN and transformer layers are [S, *shape] per start node: memory-bound updates.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "propagation.h"
#include "tessera/core/cpu_clones.h"

namespace tessera::lirpa::detail {
namespace {

constexpr double kEps = 1e-8;

template <bool Fresh, typename T>
[[gnu::always_inline]] inline void step_body(T* __restrict p, const T* __restrict g, T* __restrict m, T* __restrict v,
                                             int64_t n, T b1, T b2, T bc2, T step, T upper) {
  for (int64_t i = 0; i < n; ++i) {
    const T gi = g[i];
    const T mi = (Fresh ? T(0) : b1 * m[i]) + (1 - b1) * gi;  // a fresh slot: m = v = 0, not read
    const T vi = (Fresh ? T(0) : b2 * v[i]) + (1 - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    const T denom = std::sqrt(vi / bc2) + T(kEps);
    p[i] = std::min(std::max(p[i] - step * (mi / denom), T(0)), upper);
  }
}

template <typename T>
[[gnu::always_inline]] inline void step_body(T* p, const T* g, T* m, T* v, bool fresh, int64_t n, T b1, T b2, T bc2,
                                             T step, T upper) {
  if (fresh) step_body<true>(p, g, m, v, n, b1, b2, bc2, step, upper);
  else step_body<false>(p, g, m, v, n, b1, b2, bc2, step, upper);
}

TESSERA_CPU_CLONES void step_chunk(double* p, const double* g, double* m, double* v, bool fresh, int64_t n, double b1,
                                   double b2, double bc2, double step, double upper) {
  step_body(p, g, m, v, fresh, n, b1, b2, bc2, step, upper);
}
TESSERA_CPU_CLONES void step_chunk(float* p, const float* g, float* m, float* v, bool fresh, int64_t n, float b1,
                                   float b2, float bc2, float step, float upper) {
  step_body(p, g, m, v, fresh, n, b1, b2, bc2, step, upper);
}

template <typename T>
void fused_step(T* p, const T* g, T* m, T* v, bool fresh, int64_t n, double b1, double b2, double bc2, double step,
                double upper) {
  at::parallel_for(0, n, 16384, [&](int64_t i0, int64_t i1) {
    step_chunk(p + i0, g + i0, m + i0, v + i0, fresh, i1 - i0, T(b1), T(b2), T(bc2), T(step),
               std::isinf(upper) ? std::numeric_limits<T>::infinity() : T(upper));
  });
}

bool fusable(const at::Tensor& p, const at::Tensor& g, const AdamSlot& s) {
  auto same = [&](const at::Tensor& t) {
    return t.is_contiguous() && t.device().is_cpu() && t.scalar_type() == p.scalar_type() && t.sizes() == p.sizes();
  };
  const bool floating = p.scalar_type() == at::kDouble || p.scalar_type() == at::kFloat;
  return floating && same(p) && same(g) && s.m.defined() == s.v.defined() && (!s.m.defined() || (same(s.m) && same(s.v)));
}

}  // namespace

void adam_step(at::Tensor& p, const at::Tensor& g, AdamSlot& s, const AlphaOptions& o, double lr, int t,
               double upper) {
  const double bc1 = 1 - std::pow(o.beta1, t), bc2 = 1 - std::pow(o.beta2, t);
  at::Tensor gc = g.detach().contiguous();
  if (fusable(p, gc, s)) {
    const bool fresh = !s.m.defined();
    if (fresh) s = {at::empty_like(p), at::empty_like(p)};
    if (p.scalar_type() == at::kDouble)
      fused_step(p.data_ptr<double>(), gc.data_ptr<double>(), s.m.data_ptr<double>(), s.v.data_ptr<double>(), fresh,
                 p.numel(), o.beta1, o.beta2, bc2, lr / bc1, upper);
    else
      fused_step(p.data_ptr<float>(), gc.data_ptr<float>(), s.m.data_ptr<float>(), s.v.data_ptr<float>(), fresh,
                 p.numel(), o.beta1, o.beta2, bc2, lr / bc1, upper);
    return;
  }
  if (!s.m.defined()) s = {at::zeros_like(p), at::zeros_like(p)};
  s.m.mul_(o.beta1).add_(gc, 1 - o.beta1);
  s.v.mul_(o.beta2).addcmul_(gc, gc, 1 - o.beta2);
  at::Tensor denom = s.v.div(bc2).sqrt_().add_(kEps);  // sqrt(v_hat) + eps
  p.addcdiv_(s.m, denom, -lr / bc1).clamp_(0, upper);  // p -= lr m_hat / denom
}

}  // namespace tessera::lirpa::detail
