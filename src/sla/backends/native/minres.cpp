// Preconditioned MINRES (Paige and Saunders) for symmetric, possibly indefinite A with SPD M:
// the Lanczos process on M^{-1} A plus a QR factorisation of the tridiagonal by Givens
// rotations, updating x with three-term search directions.

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

#include "sla/backends/native/krylov.h"
#include "sla/backends/native/krylov_kernels.h"

namespace tessera::sla::detail {

KrylovResult run_minres(const LinearOperator& a, const KrylovPreconditioner& m, const at::Tensor& b, const at::Tensor& x0,
                        const KrylovParams& params) {
  KrylovResult out;
  at::Tensor x = x0.clone();
  at::Tensor r1 = b - a(x);                         // r = b - A x
  at::Tensor y = m.apply(r1);                       // y = M^{-1} r
  const double ry = params.space.dot(r1, y);
  if (ry < 0.0) { out.status = SolveStatus::Breakdown; out.message = "MINRES: preconditioner is not SPD"; out.x = x; return out; }
  const double beta1 = std::sqrt(ry);               // beta_1 = ||r||_{M^{-1}}
  if (params.space.norm(r1) <= params.tol || beta1 == 0.0) { out.status = SolveStatus::Converged; out.x = x; return out; }
  at::Tensor r2 = r1.clone();
  at::Tensor w = at::zeros_like(x), w2 = at::zeros_like(x);
  double beta = beta1, oldb = 0.0, dbar = 0.0, epsln = 0.0, phibar = beta1, cs = -1.0, sn = 0.0;
  // The recursion's residual estimate is in the M^{-1} norm; scale the target to it.
  const double tol_est = params.tol * beta1 / params.space.norm(r1);
  out.status = SolveStatus::NotConverged;
  for (int64_t it = 0; it < params.maxiter; ++it) {
    at::Tensor v = y / beta;                        // v_k = y / beta_k  (Lanczos vector)
    y = a(v);                                       // y = A v_k
    if (it > 0) y.sub_(r1, beta / oldb);            // y -= (beta_k / beta_{k-1}) r_{k-1}
    const double alfa = params.space.dot(v, y);                  // alpha_k = <v_k, A v_k>
    y.sub_(r2, alfa / beta);                        // y -= (alpha_k / beta_k) r_k
    r1 = r2;
    r2 = y;
    y = m.apply(r2);                                // y = M^{-1} r_{k+1}
    oldb = beta;
    const double r2y = params.space.dot(r2, y);
    if (!(r2y >= 0.0)) { out.status = SolveStatus::Breakdown; out.message = "MINRES: <r, M^{-1} r> < 0 or NaN"; break; }
    beta = std::sqrt(r2y);                          // beta_{k+1}
    const double oldeps = epsln;
    const double delta = cs * dbar + sn * alfa;     // previous rotation applied to the new column
    const double gbar = sn * dbar - cs * alfa;
    epsln = sn * beta;
    dbar = -cs * beta;
    const double gamma = std::max(std::hypot(gbar, beta), std::numeric_limits<double>::min());
    cs = gbar / gamma;                              // new rotation zeroes beta_{k+1}
    sn = beta / gamma;
    const double phi = cs * phibar;
    phibar = sn * phibar;                           // ||r_k||_{M^{-1}} = phibar
    at::Tensor w1 = w2;
    w2 = w;
    w = (v - oldeps * w1 - delta * w2) / gamma;     // w_k = (v_k - eps w_{k-2} - delta w_{k-1}) / gamma
    x.add_(w, phi);                                 // x = x + phi_k w_k
    out.iterations = it + 1;
    if (!std::isfinite(phibar)) { out.status = SolveStatus::Breakdown; out.message = "MINRES: non-finite residual"; break; }
    if (phibar <= tol_est) { out.status = SolveStatus::Converged; break; }
    if (beta == 0.0) { out.status = SolveStatus::Converged; break; }   // invariant subspace: exact
  }
  out.x = x;
  return out;
}

}  // namespace tessera::sla::detail
