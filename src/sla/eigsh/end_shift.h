#pragma once
// eigsh's Auto at an end of the spectrum (Which::Largest / Which::Smallest): the Krylov run on
// A gets a budget of products about what a shift-invert run would cost; when it has not
// converged by then, the Lanczos method runs on (A - σ I)^{-1} with σ beyond the wanted end,
// certified by a Cholesky factorisation of ±(A - σ I) (it succeeds only when σ < λ_min, resp.
// σ > λ_max, so the eigenvalues nearest σ are the wanted ones).

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sla/batch_solver.h"
#include "tessera/sla/eigsh.h"
#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla::detail {

/// A - σ I (float64), the diagonal added to the pattern where absent.
SparseTensor shifted(const SparseTensor& a, double sigma);

/// Gershgorin's bounds (lo, hi) of the spectrum of a symmetric float64 matrix:
/// lo = min_i a_ii - sum_{j != i} |a_ij| <= λ_min, hi = max_i a_ii + sum_{j != i} |a_ij| >= λ_max.
std::pair<double, double> gershgorin_bounds(const SparseTensor& a64);

/// The products of A a Krylov run of Krylov space size ncv gets before Auto turns to
/// shift-invert: kShiftInvertProducts solves' worth of a factor of the estimated size
/// (estimated_factor_bytes / 12 entries, two passes each), in products that touch
/// nnz + 2 ncv n numbers (the product and the basis read by the reorthogonalisation); at
/// least 2 ncv. 0 when shift-invert is not available: the estimated Cholesky factor exceeds
/// SolveOptions' default memory budget, A is not on the CPU, or no direct backend has Cholesky.
int64_t shift_invert_budget(const SparseTensor& a64, int64_t ncv, Backend solver_backend);

/// What a certified shift gives: σ and the factorisation of B = A - σ I (Which::Smallest) or
/// B = σ I - A (Which::Largest), positive definite; factor is null when no candidate worked.
struct EndShift {
  double sigma = 0.0;
  std::shared_ptr<BatchSolver> factor;
  std::string tried;   ///< the shifts tried and their outcomes, for the message
};

/// The first shift σ whose ±(A - σ I) Cholesky factorises (and solves with a small residual):
/// from the wanted Ritz value estimates `ritz` (best first) of the Krylov run, σ = θ_1 ∓ (span of
/// the k estimates) when that is inside Gershgorin's bound, then the bound itself, then the bound
/// moved out by 1e-6 of the spread (a bound that is an eigenvalue, e.g. 0 for a graph Laplacian).
EndShift factor_beyond_end(const SparseTensor& a64, Which which, const std::vector<double>& ritz,
                           Backend solver_backend);

}  // namespace tessera::sla::detail
