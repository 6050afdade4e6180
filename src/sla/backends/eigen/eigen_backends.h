#pragma once
/// @file eigen_backends.h
/// Eigen's sparse solvers behind tessera's backend interfaces (internal; use
/// make_direct_backend("eigen") / make_iterative_backend("eigen")).
///
/// Direct: SimplicialLLT (Cholesky), SimplicialLDLT (LDLT), SparseLU (LU).
/// Iterative: ConjugateGradient (Lower|Upper) and BiCGSTAB, with Jacobi or no preconditioner.

#include <memory>

#include "tessera/sla/backends/direct_backend.h"
#include "tessera/sla/backends/iterative_backend.h"

namespace tessera::sla::backends {

std::unique_ptr<DirectBackend> make_eigen_direct_backend();
std::unique_ptr<IterativeBackend> make_eigen_iterative_backend();

}  // namespace tessera::sla::backends
