// Batched CROWN on a ReluNet: the final bound of the specification rows over input boxes,
// from their hidden-layer bounds, with optional alpha slopes.

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
  std::vector<at::Tensor> lambda;
};

// Lower bound of A y + bias (A: [B, S, n_out]) over the boxes, relaxing every hidden ReLU.
Pass backward(const ReluNet& net, at::Tensor a, at::Tensor bias, const std::vector<ReluRelax>& relus,
              const DomainBatch& d, const Relaxation& relax) {
  Pass out;
  out.lambda.resize(net.layers() - 1);
  for (int k = net.layers() - 1; k >= 0; --k) {
    bias = bias + at::matmul(a, net.b[k]);  // c += A b_k
    a = at::matmul(a, net.w[k]);            // A <- A W_k  (now over h_k)
    if (k == 0) break;
    out.lambda[k - 1] = a.detach();
    const ReluRelax& r = relus[k - 1];
    at::Tensor ap = a.clamp_min(0), an = a.clamp_max(0);
    at::Tensor sl = r.sl.unsqueeze(1);
    if (k - 1 < static_cast<int>(relax.alpha.size()) && relax.alpha[k - 1].defined())
      sl = at::where(r.unstable.unsqueeze(1), relax.alpha[k - 1].clamp(0, 1), sl);
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

FinalBound final_bound(const ReluNet& net, const DomainBatch& d, const LayerBounds& bounds, const at::Tensor& c,
                       const at::Tensor& rhs, const Relaxation& relax) {
  int64_t bsz = d.size(), k = c.size(0);
  at::Tensor a = c.to(at::kDouble).unsqueeze(0).expand({bsz, k, c.size(1)});
  at::Tensor bias = (-rhs.to(at::kDouble)).unsqueeze(0).expand({bsz, k});  // g = C y - rhs
  Pass p = backward(net, a, bias, relaxations(bounds), d, relax);
  at::Tensor lb = at::where(at::isnan(p.lb), at::full_like(p.lb, -std::numeric_limits<double>::infinity()), p.lb);
  if (bounds.infeasible.defined())
    lb = lb.masked_fill(bounds.infeasible.unsqueeze(1), std::numeric_limits<double>::infinity());  // empty domain
  return {lb, p.a_in, p.lambda};
}

}  // namespace tessera::lirpa::detail
