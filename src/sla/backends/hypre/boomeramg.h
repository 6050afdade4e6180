#pragma once
// hypre's BoomerAMG as a preconditioner of tessera's Krylov solvers: the matrix is copied
// into a hypre ParCSR matrix on MPI_COMM_SELF (one process; MPI is initialised on first
// use when the program was not started by mpirun), set up once, and every application is
// one V-cycle from a zero guess with a symmetric smoother (so CG stays valid).
// Built only with TESSERA_WITH_HYPRE.

#include "sla/backends/native/krylov.h"
#include "sla/precond/csr_data.h"

namespace tessera::sla::detail {

/// z = one BoomerAMG V-cycle applied to r (float64 CPU vectors [n]).
LinearOperator make_boomeramg(const CsrData& a);

}  // namespace tessera::sla::detail
