// Driver of the native Krylov solvers: preconditioner set-up, tolerance, restarts from the
// true residual when a recursion drifted, and the SolveInfo.

#include <ATen/ATen.h>

#include <algorithm>
#include <string>

#include "sla/backends/native/krylov.h"
#include "sla/backends/native/krylov_kernels.h"
#include "sla/kernels/csr_kernels.h"
#include "sla/kernels/spmv.h"
#include "tessera/core/error.h"

namespace tessera::sla::detail {
namespace {

using Algorithm = KrylovResult (*)(const LinearOperator&, const KrylovPreconditioner&, const at::Tensor&, const at::Tensor&,
                                   const KrylovParams&);

Algorithm algorithm_for(Method method) {
  switch (method) {
    case Method::CG: return &run_cg;
    case Method::BiCGStab: return &run_bicgstab;
    case Method::GMRES: return &run_gmres;
    case Method::MINRES: return &run_minres;
    default: TESSERA_THROW(Unsupported, "the native backend has no method '", to_string(method), "'");
  }
}

/// M^{-1} = diag(1 / d); MINRES needs SPD M, so it uses |d|; zero entries are not scaled.
KrylovPreconditioner make_jacobi(const at::Tensor& diagonal, Method method) {
  at::Tensor d = method == Method::MINRES ? diagonal.abs() : diagonal;
  return KrylovPreconditioner::diagonal(at::where(d == 0, at::ones_like(d), d).reciprocal());   // 1 / a_ii
}

}  // namespace

at::Tensor CsrOperator::operator()(const at::Tensor& v) const {
  at::Tensor y = at::empty({plan->rows()}, v.options());
  plan->apply(v.reshape({plan->cols()}).contiguous(), y);   // y = A v
  return y;
}

at::Tensor IntoOperator::operator()(const at::Tensor& r) const {
  at::Tensor z = at::empty({r.numel()}, r.options());
  into(r, z);
  return z;
}

LinearOperator csr_operator(const SparseTensor& a, int64_t batch, bool transpose, bool stencil) {
  at::Tensor values = a.values().detach().reshape({a.batch_size(), a.nnz()}).narrow(0, batch, 1).contiguous();
  if (values.is_cpu() && values.scalar_type() == at::kDouble) {
    const SpmvFormat format = stencil ? SpmvFormat::Auto : SpmvFormat::Csr;
    if (!transpose) {
      return CsrOperator{std::make_shared<const SpmvPlan>(a.row_ptr(), a.col_idx(), values.reshape({-1}), a.rows(),
                                                          a.cols(), format)};
    }
    const TransposedPattern& tp = a.transposed_pattern();
    at::Tensor vt = values.reshape({-1}).index_select(0, tp.perm);   // A^T's values in its CSR order
    return CsrOperator{std::make_shared<const SpmvPlan>(tp.row_ptr, tp.col_idx, vt, a.cols(), a.rows(), format)};
  }
  if (!transpose) {
    at::Tensor rp = a.row_ptr(), ci = a.col_idx();
    const int64_t rows = a.rows(), cols = a.cols();
    return [rp, ci, values, rows, cols](const at::Tensor& v) {
      return csr_spmm(rp, ci, {}, values, v.reshape({1, cols, 1}), rows).reshape({rows});   // A v
    };
  }
  const TransposedPattern& tp = a.transposed_pattern();
  at::Tensor rp = tp.row_ptr, ci = tp.col_idx, perm = tp.perm;
  const int64_t rows = a.rows(), cols = a.cols();
  return [rp, ci, perm, values, rows, cols](const at::Tensor& v) {
    return csr_spmm(rp, ci, perm, values, v.reshape({1, rows, 1}), cols).reshape({cols});   // A^T v
  };
}

double KrylovSpace::norm(const at::Tensor& u) const { return std::sqrt(dot(u, u)); }

KrylovSpace KrylovSpace::local(int64_t n) {
  KrylovSpace s;
  s.dot = [](const at::Tensor& u, const at::Tensor& v) { return dot_host(u, v); };
  s.block_dot = [](const at::Tensor& v, const at::Tensor& w) { return at::mv(v, w); };
  s.any = [](bool flag) { return flag; };
  s.global_size = n;
  return s;
}

at::Tensor krylov_solve(const LinearOperator& a, const at::Tensor& diagonal, const at::Tensor& b,
                        const SolveOptions& options, SolveInfo& info, const KrylovSpace* space,
                        const LinearOperator* set_up_preconditioner) {
  KrylovParams params;
  params.space = space ? *space : KrylovSpace::local(b.size(0));
  const CsrOperator* csr = a.target<CsrOperator>();
  if (!space && csr && b.is_cpu() && b.scalar_type() == at::kDouble) params.plan = csr->plan.get();   // fused CG
  const int64_t n = params.space.global_size;
  info.backend = to_string(Backend::Native);
  info.method = options.method;
  info.iterations = 0;
  Algorithm run = algorithm_for(options.method);
  const double bnorm = params.space.norm(b);
  params.tol = std::max(options.rtol * bnorm, options.atol);          // ||r|| <= max(rtol ||b||, atol)
  const int64_t maxiter = options.maxiter > 0 ? options.maxiter : std::min<int64_t>(10 * n, 100000);
  params.restart = options.gmres_restart;
  params.flexible = options.preconditioner == Preconditioner::AMG && options.amg.cycle == AmgCycle::K;
  at::Tensor x = at::zeros_like(b);
  params.x0_in_place = true;                                          // x is ours: CG iterates in it
  if (bnorm == 0.0) {                                                  // A x = 0: x = 0
    info.status = SolveStatus::Converged;
    info.residual = 0.0;
    return x;
  }
  if (options.method == Method::CG && options.preconditioner == Preconditioner::Jacobi &&
      params.space.any((diagonal <= 0).any().item<bool>())) {
    info.status = SolveStatus::NotPositiveDefinite;
    info.message = "CG: a diagonal entry is <= 0, so A is not SPD";
    info.residual = 1.0;
    return x;
  }
  const bool plain = options.preconditioner == Preconditioner::None || options.preconditioner == Preconditioner::Jacobi;
  TESSERA_CHECK(plain || set_up_preconditioner != nullptr, Unsupported, "preconditioner '",
                to_string(options.preconditioner), "' is not available here (block-jacobi is for distributed "
                "solves; amg, ic0, ilu0, boomeramg for single-process solve())");
  const KrylovPreconditioner m = set_up_preconditioner ? KrylovPreconditioner::set_up(*set_up_preconditioner)   // M^{-1} r = op(r)
                                 : options.preconditioner == Preconditioner::Jacobi ? make_jacobi(diagonal, options.method)
                                                                                    : KrylovPreconditioner::identity();
  KrylovResult result;
  while (true) {
    params.maxiter = maxiter - info.iterations;
    result = run(a, m, b, x, params);
    info.iterations += result.iterations;
    x = result.x;
    if (result.status != SolveStatus::Converged) break;
    const double true_r = params.space.norm(b - a(x));                             // ||b - A x|| recomputed
    if (true_r <= params.tol) break;
    if (result.iterations == 0 || info.iterations >= maxiter) {       // drifted and cannot improve
      result.status = SolveStatus::NotConverged;
      result.message = "the true residual did not reach the tolerance";
      break;
    }
  }
  info.status = result.status;
  info.message = result.message;
  const double r = params.space.norm(b - a(x)) / bnorm;                            // ||b - A x|| / ||b||
  info.residual = std::isfinite(r) ? r : std::numeric_limits<double>::infinity();
  if (info.status == SolveStatus::NotConverged && info.message.empty()) {
    info.message = std::string(to_string(options.method)) + " reached maxiter = " + std::to_string(maxiter) +
                   " with relative residual " + std::to_string(r);
  }
  return x;
}

}  // namespace tessera::sla::detail
