#pragma once
/// @file preconditioners.h
/// Inspecting the set-up preconditioners of the native Krylov solvers (AMG, IC0, ILU0,
/// BoomerAMG; see Preconditioner in solve_options.h). solve() builds them itself; this
/// builds one alone, to see its structure and what its set-up costs.
///
/// @code
///   tessera::sla::SolveOptions opts;
///   opts.preconditioner = tessera::sla::Preconditioner::AMG;
///   auto setup = tessera::sla::setup_preconditioner(tessera::sla::poisson2d(512), opts);
///   std::cout << setup.summary << " in " << setup.seconds << " s\n";   // "amg: 6 levels, ..."
/// @endcode

#include <string>

#include "tessera/sla/solve_options.h"
#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla {

struct PreconditionerSetup {
  std::string summary;    ///< e.g. levels, coarsest size and operator complexity of AMG
  double seconds = 0.0;   ///< wall time of the set-up
  SolveStatus status = SolveStatus::Converged;   ///< NotPositiveDefinite / Singular on breakdown
  std::string message;
};

/// Builds options.preconditioner (AMG, IC0, ILU0 or BoomerAMG) for batch element 0 of `a`.
PreconditionerSetup setup_preconditioner(const SparseTensor& a, const SolveOptions& options);

}  // namespace tessera::sla
