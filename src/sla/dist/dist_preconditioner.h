#pragma once
// The set-up preconditioners of distributed Krylov solves, built once per dsolve and kept by
// its backward node, so the adjoint solve A^T λ = g reuses them:
//  - BlockJacobi: M^{-1} r = A_rr^{-1} r with this rank's diagonal block factorised locally
//    (the adjoint applies A_rr^{-T} from the same factors);
//  - BoomerAMG: one hypre V-cycle on the whole distributed A (each rank's own rows); the
//    adjoint reuses it when the method assumes a symmetric A (CG, MINRES), otherwise it sets
//    up a second hierarchy on A^T on first use.
// Jacobi and None need no set-up (krylov_solve makes them from the diagonal).
//
//   auto pc = DistPreconditioner::build(dA, options);        // collective
//   krylov_solve(op, diag, b, options, info, &space, pc->op(false));

#include <memory>
#include <mutex>
#include <utility>

#include "sla/backends/native/krylov.h"
#include "tessera/sla/dist/dsparse_tensor.h"
#include "tessera/sla/solve_options.h"

namespace tessera::sla::detail {

class DistPreconditioner {
 public:
  /// Null for None and Jacobi. Collective for BoomerAMG. Throws Unsupported for a kind that
  /// has no distributed form (amg, ic0, ilu0), NotCompiled for BoomerAMG without hypre.
  static std::shared_ptr<DistPreconditioner> build(const DSparseTensor& a, const SolveOptions& options);

  /// M^{-1} (or M^{-T} for the adjoint solve); the first transposed call may set up (collective).
  const LinearOperator* op(bool transpose);

 private:
  DistPreconditioner(DSparseTensor a, SolveOptions options) : a_(std::move(a)), options_(std::move(options)) {}
  LinearOperator make_boomeramg(bool transpose) const;

  DSparseTensor a_;
  SolveOptions options_;
  LinearOperator forward_, transposed_;
  std::once_flag transposed_once_;
};

/// Whether this build has hypre (TESSERA_WITH_HYPRE): Preconditioner::BoomerAMG across ranks.
bool distributed_boomeramg_available();

}  // namespace tessera::sla::detail
