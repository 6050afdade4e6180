// Vector kernels of the native Krylov solvers.

#include "sla/backends/native/krylov_kernels.h"

#include <ATen/ATen.h>

namespace tessera::sla::detail {

double dot_host(const at::Tensor& a, const at::Tensor& b) { return at::dot(a, b).item<double>(); }

double norm_host(const at::Tensor& a) { return a.norm().item<double>(); }

void krylov_step(at::Tensor& x, at::Tensor& r, const at::Tensor& p, const at::Tensor& q, double alpha) {
  x.add_(p, alpha);   // x = x + alpha p
  r.sub_(q, alpha);   // r = r - alpha q
}

void update_direction(at::Tensor& p, const at::Tensor& z, double beta) {
  p.mul_(beta).add_(z);   // p = z + beta p
}

bool all_finite(const at::Tensor& a) { return at::isfinite(a).all().item<bool>(); }

}  // namespace tessera::sla::detail
