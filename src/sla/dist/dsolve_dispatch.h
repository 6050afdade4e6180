#pragma once
// dsolve's `auto` backend across ranks, the distributed counterpart of choose_solver
// (src/sla/dispatch.cpp): MUMPS's LU when the estimated LU factor of the global matrix fits
// in options.memory_budget_bytes, otherwise a native Krylov method with BoomerAMG.
//
//   SolveOptions resolved = choose_distributed_solver(dA, options);   // collective
//   // resolved.backend: Mumps (method LU) or Native (CG, MINRES or GMRES)

#include "tessera/sla/dist/dsparse_tensor.h"
#include "tessera/sla/solve_options.h"

namespace tessera::sla::detail {

/// What a DSparseTensor's ranks know together (collective; the same on every rank).
struct DistMatrixSummary {
  int64_t nnz = 0;
  int64_t bandwidth = 0;      ///< max |i - j| over the stored entries, in global ids
  bool symmetric = false;     ///< ||A x - A^T x|| <= 1e-12 ||A x|| for a fixed pseudo-random x
  bool positive_diagonal = false;
};

DistMatrixSummary summarize_distributed(const DSparseTensor& a);

/// options with backend Auto resolved (collective; the same choice on every rank):
///  - a Krylov method named: that method, native, options.preconditioner as given;
///  - estimated_factor_bytes(n, nnz, bandwidth, LU) <= options.memory_budget_bytes and
///    MUMPS compiled in: Mumps, LU;
///  - otherwise native: CG for an SPD candidate (symmetric, positive diagonal) and GMRES for
///    a non-symmetric A, both with BoomerAMG (when hypre is compiled in; else the options'
///    preconditioner); MINRES with the options' preconditioner for another symmetric A.
/// Any other backend is returned as given.
SolveOptions choose_distributed_solver(const DSparseTensor& a, const SolveOptions& options);

}  // namespace tessera::sla::detail
