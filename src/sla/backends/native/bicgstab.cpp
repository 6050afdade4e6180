// Preconditioned BiCGStab (van der Vorst) for general square A.

#include <ATen/ATen.h>

#include <cmath>

#include "sla/backends/native/krylov.h"
#include "sla/backends/native/krylov_kernels.h"

namespace tessera::sla::detail {

KrylovResult run_bicgstab(const LinearOperator& a, const KrylovPreconditioner& m, const at::Tensor& b, const at::Tensor& x0,
                          const KrylovParams& params) {
  KrylovResult out;
  at::Tensor x = x0.clone();
  at::Tensor r = b - a(x);                          // r = b - A x
  const at::Tensor r_hat = r.clone();               // shadow residual
  at::Tensor p = at::zeros_like(r), v = at::zeros_like(r);
  double rho = 1.0, alpha = 1.0, omega = 1.0;
  auto fail = [&](const char* why) {
    out.status = SolveStatus::Breakdown;
    out.message = std::string("BiCGStab breakdown: ") + why;
  };
  for (int64_t it = 0;; ++it) {
    const double rnorm = params.space.norm(r);
    if (!std::isfinite(rnorm)) { fail("the residual became non-finite"); break; }
    if (rnorm <= params.tol) { out.status = SolveStatus::Converged; break; }
    if (it >= params.maxiter) { out.status = SolveStatus::NotConverged; break; }
    const double rho_new = params.space.dot(r_hat, r);           // rho = <r_hat, r>
    if (rho_new == 0.0) { fail("rho = <r_hat, r> = 0"); break; }
    const double beta = (rho_new / rho) * (alpha / omega);
    p = r + beta * (p - omega * v);                 // p = r + beta (p - omega v)
    at::Tensor p_hat = m.apply(p);                  // p_hat = M^{-1} p
    v = a(p_hat);                                   // v = A p_hat
    const double rv = params.space.dot(r_hat, v);
    if (rv == 0.0 || !std::isfinite(rv)) { fail("<r_hat, A p> = 0"); break; }
    alpha = rho_new / rv;                           // alpha = rho / <r_hat, v>
    at::Tensor s = r - alpha * v;                   // s = r - alpha v
    out.iterations = it + 1;
    if (params.space.norm(s) <= params.tol) {                   // half step already converged
      x.add_(p_hat, alpha);                         // x += alpha p_hat
      r = s;
      continue;
    }
    at::Tensor s_hat = m.apply(s);                  // s_hat = M^{-1} s
    at::Tensor t = a(s_hat);                        // t = A s_hat
    const double tt = params.space.dot(t, t);
    if (tt == 0.0) { fail("<t, t> = 0 (A s = 0: A is singular)"); break; }
    omega = params.space.dot(t, s) / tt;                         // omega = <t, s> / <t, t>
    x.add_(p_hat, alpha).add_(s_hat, omega);        // x += alpha p_hat + omega s_hat
    r = s - omega * t;                              // r = s - omega t
    if (omega == 0.0) { fail("omega = 0"); break; }
    rho = rho_new;
  }
  out.x = x;
  return out;
}

}  // namespace tessera::sla::detail
