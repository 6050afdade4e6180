#pragma once
// The set-up preconditioners of the native Krylov solvers (AMG, IC(0), ILU(0), BoomerAMG):
// built once per matrix by the BatchSolver and applied in every iteration, in the forward
// solve and in the adjoint (transposed) solve of the backward pass.
//
//   auto pc = NativePreconditioner::build(csr_of(A, 0), options, /*symmetric=*/true);
//   if (pc->status() == SolveStatus::Converged) krylov_solve(op, diag, b, options, info, nullptr, &pc->op(false));

#include <memory>
#include <mutex>
#include <string>

#include "sla/backends/native/krylov.h"
#include "sla/precond/csr_data.h"
#include "tessera/sla/preconditioners.h"

namespace tessera::sla::detail {

class NativePreconditioner {
 public:
  /// True for the preconditioners this class builds (AMG, IC0, ILU0, BoomerAMG).
  static bool handles(Preconditioner kind);
  /// handles(kind) and compiled into this build (BoomerAMG needs hypre).
  static bool available(Preconditioner kind);
  /// Set-up for `a`; `symmetric` lets the transposed solve reuse it.
  static std::shared_ptr<NativePreconditioner> build(const CsrData& a, const SolveOptions& options, bool symmetric);
  /// build() timed, as `setup_preconditioner` reports it (seconds, summary, status).
  static PreconditionerSetup timed_setup(const CsrData& a, const SolveOptions& options, bool symmetric);

  /// z = M^{-1} r, or M^{-T} r (for a non-symmetric A, AMG builds A^T's hierarchy on first use).
  const LinearOperator& op(bool transpose);
  /// Converged when the set-up succeeded; otherwise why it failed (IC(0) breakdown, ...).
  SolveStatus status() const { return status_; }
  const std::string& message() const { return message_; }
  /// One line about the set-up (levels and operator complexity, ...).
  const std::string& summary() const { return summary_; }

 private:
  LinearOperator make_op(const CsrData& a, bool transpose_factor);

  CsrData a_;
  SolveOptions options_;
  bool symmetric_ = false;
  LinearOperator forward_, transposed_;
  std::once_flag transposed_once_;
  SolveStatus status_ = SolveStatus::Converged;
  std::string message_, summary_;
};

}  // namespace tessera::sla::detail
