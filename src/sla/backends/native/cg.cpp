// Preconditioned conjugate gradients for SPD A (and SPD M).

#include <ATen/ATen.h>

#include <cmath>

#include "sla/backends/native/krylov.h"
#include "sla/backends/native/krylov_kernels.h"

namespace tessera::sla::detail {

bool cg_should_stop(double rnorm, int64_t it, const KrylovParams& params, KrylovResult& out) {
  if (!std::isfinite(rnorm)) {
    out.status = SolveStatus::Breakdown;
    out.message = "CG: the residual became non-finite";
    return true;
  }
  if (rnorm <= params.tol) {
    out.status = SolveStatus::Converged;                          // ||r|| <= tol
    return true;
  }
  if (it >= params.maxiter) {
    out.status = SolveStatus::NotConverged;
    return true;
  }
  return false;
}

KrylovResult run_cg(const LinearOperator& a, const KrylovPreconditioner& m, const at::Tensor& b, const at::Tensor& x0,
                    const KrylovParams& params) {
  if (params.plan) return run_cg_fused(*params.plan, m, b, x0, params);
  KrylovResult out;
  at::Tensor x = x0.clone();
  at::Tensor r = b - a(x);                 // r = b - A x
  at::Tensor z = m.apply(r);               // z = M^{-1} r
  at::Tensor p = z.clone();                // p = z
  double rz = params.space.dot(r, z);                   // rho = <r, z>
  for (int64_t it = 0;; ++it) {
    const double rnorm = params.space.norm(r);
    if (cg_should_stop(rnorm, it, params, out)) break;
    at::Tensor q = a(p);                   // q = A p
    const double pq = params.space.dot(p, q);           // curvature <p, A p>
    if (!(pq > 0.0)) {
      out.status = SolveStatus::NotPositiveDefinite;
      out.message = "CG: non-positive curvature <p, A p> = " + std::to_string(pq) + ": A is not SPD";
      break;
    }
    const double alpha = rz / pq;          // alpha = <r, z> / <p, A p>
    krylov_step(x, r, p, q, alpha);               // x += alpha p; r -= alpha q
    z = m.apply(r);                        // z = M^{-1} r
    const double rz_new = params.space.dot(r, z);
    // beta = rho_new / rho, or flexibly -alpha <z, q> / rho (q = A p of the step just taken)
    const double beta = params.flexible ? -alpha * params.space.dot(z, q) / rz : rz_new / rz;
    update_direction(p, z, beta);          // p = z + beta p
    rz = rz_new;
    out.iterations = it + 1;
  }
  out.x = x;
  return out;
}

}  // namespace tessera::sla::detail
