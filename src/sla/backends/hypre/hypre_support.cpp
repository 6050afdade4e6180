// hypre's initialisation, error codes and vector access, shared by the one-process and
// the distributed BoomerAMG. Compiled only when hypre is found.
#if TESSERA_WITH_HYPRE

#include "sla/backends/hypre/hypre_support.h"

#include <_hypre_parcsr_mv.h>
#include <mpi.h>

#include <mutex>

#include "tessera/core/error.h"

namespace tessera::sla::detail {

void ensure_hypre_initialised() {
  static std::once_flag once;
  std::call_once(once, [] {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) {
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);   // singleton, like dist::world()
    }
    HYPRE_Init();
  });
}

void check_hypre(HYPRE_Int code, const char* what) {
  if (code != 0) {
    char text[256] = {0};
    HYPRE_DescribeError(code, text);
    HYPRE_ClearAllErrors();
    TESSERA_THROW(InvalidInput, "hypre ", what, " failed: ", text);
  }
}

double* hypre_local_data(HYPRE_IJVector v) {
  void* object = nullptr;
  HYPRE_IJVectorGetObject(v, &object);
  return hypre_VectorData(hypre_ParVectorLocalVector(static_cast<hypre_ParVector*>(object)));
}

void set_vcycle_parameters(HYPRE_Solver solver) {
  HYPRE_BoomerAMGSetPrintLevel(solver, 0);
  HYPRE_BoomerAMGSetMaxIter(solver, 1);          // one V-cycle per application
  HYPRE_BoomerAMGSetTol(solver, 0.0);
  HYPRE_BoomerAMGSetCoarsenType(solver, 10);     // HMIS
  HYPRE_BoomerAMGSetInterpType(solver, 6);       // extended+i
  HYPRE_BoomerAMGSetPMaxElmts(solver, 4);
  HYPRE_BoomerAMGSetRelaxType(solver, 16);       // Chebyshev in D^-1 A: a polynomial, the same at any partition
  HYPRE_BoomerAMGSetChebyOrder(solver, 3);       // p(D^-1 A) of degree 3 on [0.3 λmax, λmax]
  HYPRE_BoomerAMGSetNumSweeps(solver, 1);
}

}  // namespace tessera::sla::detail
#endif  // TESSERA_WITH_HYPRE
