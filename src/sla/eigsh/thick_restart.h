#pragma once
// One run of single-vector thick-restart Lanczos on an operator deflated by locked vectors:
// the engine behind thick_restart_lanczos (lanczos.h), which runs it once for the wanted
// pairs and then again, from random starts orthogonal to the pairs found, until no missed
// copy of a multiple eigenvalue appears.

#include <ATen/core/Generator.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "sla/eigsh/lanczos.h"

namespace tessera::sla::detail {

/// Column-major vectors of length n: `locked` orthonormal columns (converged eigenvectors,
/// deflated from the operator), then the Krylov basis of the current run.
struct LockedBasis {
  int64_t n = 0;
  int64_t locked = 0;
  std::vector<double> v;         ///< [n, locked + ncv + 1] (grown by the run as needed)
  std::vector<double> scratch;   ///< Ritz vectors at a restart [n, ncv]
};

/// A run may stop when this holds for its wanted Ritz values θ [k] (best first) and their
/// residual estimates ρ [k] (||P op P y - θ y|| of the Ritz pair).
using StopRule = std::function<bool(const std::vector<double>& theta, const std::vector<double>& resid)>;

struct RunResult {
  bool stopped = false;          ///< the stop rule held within p.maxiter restarts
  std::vector<double> theta;     ///< the k wanted Ritz values at the last Rayleigh-Ritz, best first
  std::vector<double> resid;     ///< their residual estimates
  int64_t restarts = 0;
  int64_t applications = 0;
};

/// Ranking key of a Ritz value: the wanted ones have the largest score.
double ritz_score(double theta, RitzOrder order);

/// The ARPACK convergence test of one Ritz pair: ρ <= tol max(eps^{2/3}, |θ|).
bool ritz_converged(double theta, double resid, double tol);

/// Thick-restart Lanczos for the p.k wanted Ritz pairs of P op P, P = I - L L^T with L the
/// locked columns, from a random start ⟂ L drawn from gen, Krylov space size p.ncv (needs
/// 1 <= k < ncv < n - locked). When it stops, its k Ritz vectors (best first) are columns
/// locked .. locked + k - 1 of basis.v (orthonormal, ⟂ L), not yet locked.
RunResult thick_restart_run(const VectorOperator& op, LockedBasis& basis, const LanczosParams& p,
                            at::Generator& gen, const StopRule& stop);

}  // namespace tessera::sla::detail
