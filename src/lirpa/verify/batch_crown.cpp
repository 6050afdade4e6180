// Batched CROWN on a ReluNet: intermediate bounds layer by layer, the final bound of the
// specification rows with optional alpha slopes.

#include "batch_crown.h"

#include <ATen/ATen.h>

#include <limits>

namespace tessera::lirpa::detail {
namespace {

/// Linear relaxation of relu(z) on [l, u]: sl z <= relu(z) <= su z + ub.
struct ReluRelax {
  at::Tensor sl, su, ub, unstable;  // [B, n]
};

ReluRelax relax_layer(const at::Tensor& l, const at::Tensor& u) {
  at::Tensor active = l >= 0, inactive = u <= 0;
  at::Tensor unstable = active.logical_or(inactive).logical_not();
  at::Tensor denom = at::where(unstable, u - l, at::ones_like(u));
  at::Tensor su = at::where(unstable, u / denom, active.to(at::kDouble));      // su = u / (u - l)
  at::Tensor ub = at::where(unstable, -su * l, at::zeros_like(u));            // relu(z) <= su (z - l)
  at::Tensor sl = active.logical_or(unstable.logical_and(u > -l)).to(at::kDouble);  // adaptive slope
  return {sl, su, ub, unstable};
}

struct Pass {
  at::Tensor lb, a_in;
};

// Lower bound of A z_m + bias (A: [B, S, n_m]) over the boxes, relaxing the ReLUs of layers < m.
Pass backward_from(const ReluNet& net, int m, at::Tensor a, at::Tensor bias, const std::vector<ReluRelax>& relus,
                   const DomainBatch& d, const Relaxation* relax) {
  Pass out;
  for (int k = m - 1; k >= 0; --k) {
    bias = bias + at::matmul(a, net.b[k]);  // c += A b_k
    a = at::matmul(a, net.w[k]);            // A <- A W_k  (now over h_k)
    if (k == 0) break;
    const ReluRelax& r = relus[k - 1];
    at::Tensor ap = a.clamp_min(0), an = a.clamp_max(0);
    at::Tensor sl = r.sl.unsqueeze(1);
    if (relax && k - 1 < static_cast<int>(relax->alpha.size()) && relax->alpha[k - 1].defined())
      sl = at::where(r.unstable.unsqueeze(1), relax->alpha[k - 1].clamp(0, 1), sl);
    bias = bias + (an * r.ub.unsqueeze(1)).sum(-1);  // negative coefficients take the upper line
    a = ap * sl + an * r.su.unsqueeze(1);            // A <- A+ sl + A- su  (now over z_k)
  }
  at::Tensor xc = ((d.xl + d.xu) / 2).unsqueeze(-1), xr = ((d.xu - d.xl) / 2).unsqueeze(-1);
  out.lb = bias + at::matmul(a, xc).squeeze(-1) - at::matmul(a.abs(), xr).squeeze(-1);  // min A x = A c - |A| r
  out.a_in = a.detach();
  return out;
}

std::vector<ReluRelax> relaxations(const LayerBounds& bounds) {
  std::vector<ReluRelax> r;
  for (size_t k = 0; k < bounds.lower.size(); ++k) r.push_back(relax_layer(bounds.lower[k], bounds.upper[k]));
  return r;
}

}  // namespace

LayerBounds intermediate_bounds(const ReluNet& net, const DomainBatch& d) {
  at::NoGradGuard no_grad;
  LayerBounds out;
  int64_t bsz = d.size();
  std::vector<ReluRelax> relus;
  for (int m = 1; m < net.layers(); ++m) {
    int64_t n = net.width(m);
    at::Tensor l, u;
    if (m == 1) {
      at::Tensor c = at::addmm(net.b[0], (d.xl + d.xu) / 2, net.w[0].t());  // W c + b
      at::Tensor r = at::matmul((d.xu - d.xl) / 2, net.w[0].abs().t());      // |W| r
      l = c - r;
      u = c + r;
    } else {
      at::Tensor eye = at::eye(n, at::kDouble);
      at::Tensor a = at::cat({eye, -eye}).unsqueeze(0).expand({bsz, 2 * n, n});  // rows [I; -I]
      Pass p = backward_from(net, m, a, at::zeros({bsz, 2 * n}, at::kDouble), relus, d, nullptr);
      l = p.lb.slice(1, 0, n);
      u = -p.lb.slice(1, n);  // u = -min(-z)
    }
    u = at::max(u, l);  // l > u only by rounding: a box is never empty
    out.lower.push_back(l);
    out.upper.push_back(u);
    relus.push_back(relax_layer(l, u));
  }
  return out;
}

FinalBound final_bound(const ReluNet& net, const DomainBatch& d, const LayerBounds& bounds, const at::Tensor& c,
                       const at::Tensor& rhs, const Relaxation& relax) {
  int64_t bsz = d.size(), k = c.size(0);
  at::Tensor a = c.to(at::kDouble).unsqueeze(0).expand({bsz, k, c.size(1)});
  at::Tensor bias = (-rhs.to(at::kDouble)).unsqueeze(0).expand({bsz, k});  // g = C y - rhs
  Pass p = backward_from(net, net.layers(), a, bias, relaxations(bounds), d, &relax);
  at::Tensor lb = at::where(at::isnan(p.lb), at::full_like(p.lb, -std::numeric_limits<double>::infinity()), p.lb);
  return {lb, p.a_in};
}

}  // namespace tessera::lirpa::detail
