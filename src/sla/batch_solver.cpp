// BatchSolver: per-element dispatch, factorisation with fallback, and solves with A or A^T.

#include "sla/batch_solver.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

#include "sla/backend_lookup.h"
#include "sla/backends/native/krylov.h"
#include "tessera/core/error.h"
#include "tessera/core/threads.h"

namespace tessera::sla::detail {
namespace {

/// Relative residual above which a direct solve is reported as Singular.
constexpr double kDirectResidualLimit = 1e-6;

/// max over columns of ||op(x) - b|| / ||b||   (b [n, k], x [n, k])
double relative_residual(const LinearOperator& op, const at::Tensor& x, const at::Tensor& b) {
  double worst = 0.0;
  for (int64_t c = 0; c < b.size(1); ++c) {
    at::Tensor bc = b.select(1, c), xc = x.select(1, c);
    const double bn = bc.norm().item<double>();
    const double rn = (op(xc) - bc).norm().item<double>();   // ||A x - b||
    const double r = bn > 0 ? rn / bn : rn;
    worst = std::max(worst, std::isfinite(r) ? r : std::numeric_limits<double>::infinity());
  }
  return worst;
}

}  // namespace

void merge_info(SolveInfo& total, const SolveInfo& part) {
  if (part.status != total.status && worse_status(part.status, total.status) == part.status) {
    total.status = part.status;
    total.message = part.message;
  } else if (total.message.empty()) {
    total.message = part.message;   // e.g. which fallback ran
  }
  total.iterations = std::max(total.iterations, part.iterations);
  total.residual = std::max(total.residual, part.residual);
  total.backend = part.backend;
  total.method = part.method;
  total.spmv_format = part.spmv_format;
}

BatchSolver::BatchSolver(const SparseTensor& a, const SolveOptions& options)
    : a_(a.with_values(a.values().detach().to(at::kDouble))), options_(options) {
  const MatrixProperties props = detect_properties(a_, 0);
  choice_ = choose_solver(a_, props, options_);
  const int64_t batch = a_.batch_size();
  elements_.resize(batch);
  // an iterative backend's prepare checks the preconditioner (Unsupported, or NotCompiled)
  const std::unique_ptr<IterativeBackend> iterative =
      is_krylov(choice_.method) ? make_iterative_backend(choice_.backend) : nullptr;
  for (int64_t i = 0; i < batch; ++i) {
    Element& e = elements_[i];
    e.method = choice_.method;
    if (iterative) {
      e.iterative = iterative->prepare(a_, i, options_);   // operator and preconditioner set up once
    } else {
      prepare_direct(i, e);
    }
  }
}

void BatchSolver::prepare_direct(int64_t index, Element& e) {
  auto backend = direct_backend(choice_.backend);
  const CsrMatrix csr = a_.to_csr_matrix(index);
  core::ScopedBlasThreads blas(1);   // supernodal factorisations and our OpenMP do not mix
  e.factor = backend->factorize(csr, e.method);
  if (!choice_.allow_fallback || e.method != Method::Cholesky) return;
  // SPD was only a guess from symmetry and the diagonal: Cholesky -> LDLT -> LU, on the same
  // backend when it has them, else on the preferred LU backend.
  for (Method next : {Method::LDLT, Method::LU}) {
    if (e.factor->status() != SolveStatus::NotPositiveDefinite) return;
    std::unique_ptr<DirectBackend> other;
    DirectBackend* use = backend.get();
    if (!backend->supports(next)) {
      const Backend lu = next == Method::LU ? preferred_direct_backend(next) : Backend::Auto;
      if (lu == Backend::Auto) continue;
      other = direct_backend(lu);
      use = other.get();
    }
    e.message = "Cholesky found a non-positive pivot; fell back to " + std::string(to_string(next)) + " (" +
                use->name() + ")";
    e.method = next;
    e.factor = use->factorize(csr, next);
  }
}

at::Tensor BatchSolver::solve(const at::Tensor& b, bool transpose, SolveInfo& info) {
  const int64_t batch = a_.batch_size();
  TESSERA_CHECK(b.dim() == 3 && (b.size(0) == 1 || b.size(0) == batch), DimensionMismatch,
                "BatchSolver: b must be [1 or ", batch, ", n, k]");
  at::Tensor bd = b.detach().to(at::kDouble);
  std::vector<at::Tensor> xs;
  info = SolveInfo{};
  for (int64_t i = 0; i < batch; ++i) {
    SolveInfo part;
    xs.push_back(solve_element(i, bd[b.size(0) == 1 ? 0 : i], transpose, part));
    merge_info(info, part);
  }
  return at::stack(xs);
}

at::Tensor BatchSolver::solve_element(int64_t index, const at::Tensor& b, bool transpose, SolveInfo& info) {
  Element& e = elements_[index];
  if (e.iterative) return solve_iterative(e, b, transpose, info);
  info.backend = e.factor->backend();
  info.method = e.factor->method();
  info.status = e.factor->status();
  info.message = e.factor->message().empty() ? e.message : e.factor->message();
  if (info.status != SolveStatus::Converged) {
    info.residual = std::numeric_limits<double>::infinity();
    return at::full_like(b, std::numeric_limits<double>::quiet_NaN());   // reported, never silent
  }
  at::Tensor x;
  {
    core::ScopedBlasThreads blas(1);
    x = e.factor->solve(b.contiguous(), transpose);                      // x = A^{-1} b or A^{-T} b
  }
  info.residual = relative_residual(csr_operator(a_, index, transpose, options_.stencil_spmv), x, b);
  // A backward-stable factorisation leaves a tiny residual even when A is ill-conditioned; a
  // large or non-finite one means a (near-)zero pivot slipped through: report it.
  if (!(info.residual <= kDirectResidualLimit)) {
    info.status = SolveStatus::Singular;
    info.message = "direct solve left relative residual " + std::to_string(info.residual) +
                   ": the matrix is numerically singular";
    if (!at::isfinite(x).all().item<bool>()) x = at::full_like(b, std::numeric_limits<double>::quiet_NaN());
  }
  return x;
}

at::Tensor BatchSolver::solve_iterative(Element& e, const at::Tensor& b, bool transpose, SolveInfo& info) {
  IterativeResult r = e.iterative->solve(b, transpose, e.method);
  // Properties were a guess: CG -> MINRES on negative curvature, BiCGStab -> GMRES on breakdown.
  const bool retry = choice_.allow_fallback &&
                     ((e.method == Method::CG && r.info.status == SolveStatus::NotPositiveDefinite) ||
                      (e.method == Method::BiCGStab && r.info.status == SolveStatus::Breakdown));
  if (retry) {
    e.method = e.method == Method::CG ? Method::MINRES : Method::GMRES;
    r = e.iterative->solve(b, transpose, e.method);
  }
  info = r.info;
  return r.x;
}

}  // namespace tessera::sla::detail
