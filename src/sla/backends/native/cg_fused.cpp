// Preconditioned CG on a CPU CSR plan: the generic loop of cg.cpp with its vector updates
// fused into three passes per iteration and every vector allocated once (a constant positive
// Jacobi diagonal runs as M = I: the same x, without z):
//   q = A p and <p, q>                      (the SpMV pass)
//   x += alpha p, r -= alpha q, z = M^{-1} r, <r, r>, <r, z>   (one pass)
//   p = z + beta p                          (one pass)
// A set-up preconditioner that writes into a given vector (IntoOperator: the AMG cycle) writes
// into CG's z; x is the driver's own vector when it says so (KrylovParams::x0_in_place).

#include <ATen/ATen.h>

#include <cmath>
#include <string>

#include "sla/backends/native/cg_fused_kernels.h"
#include "sla/backends/native/krylov.h"
#include "sla/kernels/spmv.h"

namespace tessera::sla::detail {

namespace {

// True when every entry of `d` equals one positive value.
bool scalar_positive(const at::Tensor& d) {
  if (d.numel() == 0) return false;
  const at::Tensor first = d.reshape({-1})[0];
  return first.item<double>() > 0.0 && at::equal(d, first.expand_as(d));
}

}  // namespace

KrylovResult run_cg_fused(const SpmvPlan& a, const KrylovPreconditioner& m, const at::Tensor& b, const at::Tensor& x0,
                          const KrylovParams& params) {
  KrylovResult out;
  const std::vector<int64_t>& blocks = a.row_blocks();
  const bool diagonal = m.is_diagonal();
  // M^{-1} = c I (c > 0: a constant diagonal, as a constant-coefficient stencil's) leaves CG's
  // iterates x as they are without M (p and alpha scale by c and 1 / c): no z, and two vector
  // passes fewer per iteration
  const bool jacobi = diagonal && m.inv_diag.defined() && !scalar_positive(m.inv_diag);
  const IntoOperator* into = diagonal ? nullptr : m.apply_set_up.target<IntoOperator>();
  // q = A p is dead from the step's update until the next product, unless the flexible beta
  // reads it after M^{-1}: then the operator may use it as scratch
  const bool lend_q = into && into->into_scratch && !params.flexible;
  at::Tensor x = params.x0_in_place && x0.is_contiguous() ? x0 : x0.contiguous().clone();
  at::Tensor q = at::empty_like(x), p = at::empty_like(x);
  a.apply(x, q);
  at::Tensor r = b.contiguous() - q;                                  // r = b - A x
  at::Tensor z;                                                       // z = M^{-1} r (M = I: z is r)
  if (diagonal && !jacobi) {
    z = r;
  } else if (into) {
    z = at::empty_like(r);
    if (lend_q) {
      into->into_scratch(r, z, q);                                    // q (A x0) is dead: the operator's scratch
    } else {
      into->into(r, z);
    }
  } else {
    z = m.apply(r).contiguous();
  }
  at::Tensor d = jacobi ? m.inv_diag.contiguous() : at::Tensor();
  double* xp = x.data_ptr<double>();
  double* rp = r.data_ptr<double>();
  double* pp = p.data_ptr<double>();
  double* qp = q.data_ptr<double>();
  p.copy_(z);                                                         // p = z
  double rr = blocked_dot(blocks, rp, rp);                            // <r, r>
  double rz = diagonal && !jacobi ? rr : blocked_dot(blocks, rp, z.data_ptr<double>());   // rho = <r, z>
  for (int64_t it = 0;; ++it) {
    const double rnorm = std::sqrt(rr);
    if (cg_should_stop(rnorm, it, params, out)) break;
    const double pq = a.apply_dot(p, q);                              // q = A p; curvature <p, A p>
    if (!(pq > 0.0)) {
      out.status = SolveStatus::NotPositiveDefinite;
      out.message = "CG: non-positive curvature <p, A p> = " + std::to_string(pq) + ": A is not SPD";
      break;
    }
    const double alpha = rz / pq;                                     // alpha = <r, z> / <p, A p>
    double rz_new, beta_num = 0.0;                                         // beta = beta_num / rho
    if (jacobi) {
      const TwoSums s = cg_step_jacobi(blocks, xp, rp, z.data_ptr<double>(), pp, qp, d.data_ptr<double>(), alpha);
      rr = s.first;
      rz_new = s.second;
    } else {
      rr = cg_step(blocks, xp, rp, pp, qp, alpha);                    // x += alpha p; r -= alpha q
      if (diagonal) {
        rz_new = rr;                                                  // M = I: <r, z> = <r, r>
      } else {
        if (lend_q) {
          into->into_scratch(r, z, q);                                // z = M^{-1} r, in place; q dead here
        } else if (into) {
          into->into(r, z);                                           // z = M^{-1} r, in place
        } else {
          z = m.apply(r).contiguous();                                // z = M^{-1} r
        }
        if (params.flexible) {
          const TwoSums s = blocked_dot2(blocks, z.data_ptr<double>(), rp, qp);   // <z, r>, <z, q>
          rz_new = s.first;
          beta_num = -alpha * s.second;                                 // <z, r_new - r_old> = -alpha <z, q>
        } else {
          rz_new = blocked_dot(blocks, rp, z.data_ptr<double>());
        }
      }
    }
    if (!params.flexible || diagonal) beta_num = rz_new;
    cg_direction(blocks, pp, z.data_ptr<double>(), beta_num / rz);    // p = z + beta p
    rz = rz_new;
    out.iterations = it + 1;
  }
  out.x = x;
  return out;
}

}  // namespace tessera::sla::detail
