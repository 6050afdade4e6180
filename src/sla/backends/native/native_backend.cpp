// Backend::Native: the operator of one batch element, Jacobi's diagonal and the set-up
// preconditioner prepared once; solves column by column with krylov_solve.

#include "sla/backends/native/native_backend.h"

#include <ATen/ATen.h>

#include <limits>
#include <mutex>
#include <vector>

#include "sla/backends/native/krylov.h"
#include "sla/kernels/spmv.h"
#include "sla/precond/native_preconditioner.h"
#include "tessera/core/error.h"
#include "tessera/sla/solve.h"

namespace tessera::sla::backends {
namespace {

class NativeSolver final : public IterativeSolver {
 public:
  NativeSolver(const SparseTensor& a, int64_t batch, const SolveOptions& options) : a_(a), batch_(batch), options_(options) {
    if (options.preconditioner == Preconditioner::Jacobi) {   // a_ii: Jacobi's M (not held otherwise)
      diagonal_ = a.with_values(a.values().reshape({a.batch_size(), a.nnz()})[batch]).diagonal();
    }
    forward_ = detail::csr_operator(a, batch, false, options.stencil_spmv);
    if (detail::NativePreconditioner::handles(options.preconditioner)) {
      const bool symmetric = detect_properties(a, batch).symmetric;   // M^{-T} = M^{-1} then
      preconditioner_ = detail::NativePreconditioner::build(detail::csr_of(a, batch), options, symmetric);   // set-up once
    }
  }

  IterativeResult solve(const at::Tensor& b, bool transpose, Method method) const override {
    TESSERA_CHECK(is_krylov(method), Unsupported, "native: method '", to_string(method),
                  "' is not a Krylov method (cg, bicgstab, gmres, minres)");
    TESSERA_CHECK((b.dim() == 1 || b.dim() == 2) && b.size(0) == a_.rows(), DimensionMismatch, "native: b must be [",
                  a_.rows(), "] or [", a_.rows(), ", k], got ", b.sizes());
    IterativeResult out;
    out.info.backend = to_string(Backend::Native);
    out.info.method = method;
    if (preconditioner_ && preconditioner_->status() != SolveStatus::Converged) {   // set-up broke down
      out.info.status = preconditioner_->status();
      out.info.message = preconditioner_->message();
      out.info.residual = std::numeric_limits<double>::infinity();
      out.x = at::full_like(b, std::numeric_limits<double>::quiet_NaN());
      return out;
    }
    const detail::LinearOperator& op = transpose ? transposed() : forward_;
    if (const auto* csr = op.target<detail::CsrOperator>()) out.info.spmv_format = csr->plan->format_name();
    const detail::LinearOperator* pc = preconditioner_ ? &preconditioner_->op(transpose) : nullptr;
    SolveOptions opts = options_;
    opts.method = method;
    const at::Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
    std::vector<at::Tensor> columns;
    for (int64_t c = 0; c < b2.size(1); ++c) {
      SolveInfo part;
      columns.push_back(detail::krylov_solve(op, diagonal_, b2.select(1, c).contiguous(), opts, part, nullptr, pc));
      out.info.iterations = std::max(out.info.iterations, part.iterations);
      out.info.residual = std::max(out.info.residual, part.residual);
      if (worse_status(part.status, out.info.status) != out.info.status || out.info.message.empty()) {
        out.info.message = part.message;
      }
      out.info.status = worse_status(out.info.status, part.status);
    }
    if (b.dim() == 1) {
      out.x = columns.front();
    } else {
      out.x = columns.size() == 1 ? columns.front().unsqueeze(1) : at::stack(columns, 1);   // one column: no copy
    }
    return out;
  }

 private:
  /// v -> A^T v, built on the first transposed solve (the adjoint of the backward pass).
  const detail::LinearOperator& transposed() const {
    std::call_once(transposed_once_, [this] {
      transposed_ = detail::csr_operator(a_, batch_, true, options_.stencil_spmv);
    });
    return transposed_;
  }

  SparseTensor a_;
  int64_t batch_;
  SolveOptions options_;
  at::Tensor diagonal_;
  detail::LinearOperator forward_;
  mutable detail::LinearOperator transposed_;
  mutable std::once_flag transposed_once_;
  std::shared_ptr<detail::NativePreconditioner> preconditioner_;
};

class NativeBackend final : public IterativeBackend {
 public:
  Backend id() const override { return Backend::Native; }
  bool supports(Method method) const override { return is_krylov(method); }
  bool supports(Preconditioner p) const override {
    return p == Preconditioner::None || p == Preconditioner::Jacobi || detail::NativePreconditioner::available(p);
  }
  std::unique_ptr<IterativeSolver> prepare(const SparseTensor& a, int64_t batch,
                                           const SolveOptions& options) const override {
    TESSERA_CHECK(options.method == Method::Auto || supports(options.method), Unsupported, "native: method '",
                  to_string(options.method), "' is not provided; use cg, bicgstab, gmres or minres");
    TESSERA_CHECK(options.preconditioner != Preconditioner::BlockJacobi, Unsupported,
                  "native: block-jacobi is the preconditioner of distributed solves (dsolve); on one process "
                  "use a direct backend");
    TESSERA_CHECK(supports(options.preconditioner), NotCompiled, "native: the ", to_string(options.preconditioner),
                  " preconditioner is not compiled into this build (BoomerAMG needs TESSERA_WITH_HYPRE)");
    TESSERA_CHECK(options.rtol >= 0.0 && options.atol >= 0.0, InvalidInput,
                  "native: need rtol >= 0 and atol >= 0 (both 0: run maxiter iterations), got rtol = ", options.rtol,
                  ", atol = ", options.atol);
    TESSERA_CHECK(options.maxiter >= 0, InvalidInput, "native: maxiter must be >= 0, got ", options.maxiter);
    TESSERA_CHECK(batch >= 0 && batch < a.batch_size(), InvalidInput, "native: batch element ", batch,
                  " out of range [0, ", a.batch_size(), ")");
    return std::make_unique<NativeSolver>(a, batch, options);
  }
};

}  // namespace

std::unique_ptr<IterativeBackend> make_native_backend() { return std::make_unique<NativeBackend>(); }

}  // namespace tessera::sla::backends
