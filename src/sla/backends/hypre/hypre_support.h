#pragma once
// What every use of hypre shares: MPI and hypre initialised once per process, hypre error
// codes turned into tessera exceptions, and the local entries of a hypre vector.
// Built only with TESSERA_WITH_HYPRE.

#include <HYPRE.h>
#include <HYPRE_IJ_mv.h>
#include <HYPRE_parcsr_ls.h>

namespace tessera::sla::detail {

/// MPI (hypre is built with it; initialised here when the program was not started by
/// mpirun) and hypre itself, once per process.
void ensure_hypre_initialised();

/// Throws InvalidInput naming `what` and hypre's description when `code` is an error.
void check_hypre(HYPRE_Int code, const char* what);

/// This process's entries of an assembled ParCSR IJ vector.
double* hypre_local_data(HYPRE_IJVector v);

/// BoomerAMG as a preconditioner: one V-cycle per application from a zero guess, HMIS
/// coarsening, extended+i interpolation (at most 4 entries per row), one degree-3 Chebyshev
/// smoothing step before and after each coarse correction (a polynomial in D^-1 A, so the
/// V-cycle is symmetric for a symmetric A, CG stays valid, and the smoother is the same at
/// every rank count; hybrid Gauss-Seidel is Jacobi across rank boundaries and cost 2D
/// Poisson 3 iterations at 2-4 ranks).
void set_vcycle_parameters(HYPRE_Solver solver);

}  // namespace tessera::sla::detail
