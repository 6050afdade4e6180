#pragma once
// Smoothed-aggregation algebraic multigrid (Vanek, Mandel, Brezina 1996) as a Krylov
// preconditioner. Set-up on the CPU: strength of connection (a threshold per level,
// level_strength), greedy aggregation (every row with an off-diagonal in an aggregate),
// tentative prolongator (the constant vector, not normalised, so the constant is the
// near-null-space vector of every level), one damped-Jacobi smoothing
// step P = (I - w D^{-1} A) T, and the Galerkin coarse operator A_c = P^T A P by a fused
// sparse triple product. The hierarchy is a list of CSR tensors (the finest may be a
// matrix-free stencil form, csr_from_stencil); the cycle (V, W or K by AmgOptions::cycle;
// Chebyshev smoothing, a dense coarsest solve) is written in ATen ops, so it runs where the
// tensors are. Its vectors are the hierarchy's own (a workspace allocated on the first cycle
// and reused by every later one: no vector is allocated per cycle, except the W / K-cycle's
// few on the coarse levels).
//
//   AmgHierarchy h = build_amg(csr_of(A, 0), AmgOptions{});
//   at::Tensor z = h.vcycle(r);   // z ~= A^{-1} r, a symmetric positive definite map for SPD A
//   h.vcycle(r, z);               // the same into z

#include <ATen/core/Tensor.h>

#include <memory>
#include <mutex>
#include <vector>

#include "sla/precond/csr_data.h"
#include "tessera/sla/solve_options.h"

namespace tessera::sla::detail {

struct AmgLevel {
  CsrData a;              ///< operator of this level
  CsrData p;              ///< prolongator to this level from the next coarser one (not on the last level);
                          ///< the restriction R = P^T is applied through P, never stored
  at::Tensor inv_diag;    ///< 1 / a_ii (smoother); one value broadcast over the rows (stride 0) for a
                          ///< matrix-free level with a constant diagonal
  double lambda_max = 0;  ///< estimate of the largest eigenvalue of D^{-1} A
};

/// Wall seconds of the set-up's phases, summed over levels.
struct AmgSetupSeconds {
  double spectrum = 0;        ///< D^{-1} and the power iterations for lambda_max
  double aggregation = 0;     ///< strength of connection and aggregates
  double prolongator = 0;     ///< P = (I - w D^{-1} A) T
  double galerkin = 0;        ///< A_c = P^T (A P)
  double coarse_inverse = 0;  ///< dense inverse of the coarsest operator
};

class AmgHierarchy {
 public:
  AmgHierarchy() = default;
  AmgHierarchy(std::vector<AmgLevel> levels, at::Tensor coarse_inverse, AmgOptions options);

  /// One cycle from a zero initial guess: z = B r, B symmetric when A is (V and W cycles; the
  /// K-cycle is a nonlinear map, for flexible CG).
  at::Tensor vcycle(const at::Tensor& r) const;
  /// The same into `z` ([rows], contiguous, r's dtype and device; not r): the finest level
  /// then allocates nothing. `scratch` (optional, like z, neither r nor z): a vector of the
  /// caller's that is dead during the cycle (CG's q), used as the finest level's smoother
  /// direction and left overwritten, so the hierarchy holds one finest vector less. Calls on
  /// one hierarchy are serialised (one workspace).
  void vcycle(const at::Tensor& r, at::Tensor& z, at::Tensor* scratch = nullptr) const;

  const std::vector<AmgLevel>& levels() const { return levels_; }
  /// Dense inverse of the coarsest operator (undefined when that level is too large: then it
  /// is only smoothed).
  const at::Tensor& coarse_inverse() const { return coarse_inverse_; }
  /// sum of nnz over levels / nnz of the finest level.
  double operator_complexity() const;
  /// Bytes held by the hierarchy's tensors (excluding the finest operator, owned by the caller,
  /// and the cycle's workspace).
  int64_t bytes() const;
  /// Bytes of the cycle's workspace (0 before the first cycle).
  int64_t workspace_bytes() const;

  AmgSetupSeconds setup_seconds;   ///< filled by build_amg

 private:
  /// The vectors of one level: the smoother's r and d, and below the finest the level's
  /// right-hand side b and solution x; `partial` the scatter buffers of the restriction to the
  /// next level. A d, the residual and P e_c are formed row by row on the CPU (float64); t holds
  /// them elsewhere (allocated on first use).
  struct LevelVectors {
    at::Tensor b, x, r, d, t, partial;
  };
  struct Workspace {
    std::mutex mutex;
    std::vector<LevelVectors> levels;   ///< the finest level's d allocated only when no scratch came
    at::Tensor* scratch = nullptr;      ///< the caller's vector standing in for the finest d, this cycle
  };

  /// Allocates the workspace for vectors like `r` (once; again when dtype or device change).
  void ensure_workspace(const at::Tensor& r) const;
  /// x = cycle(b) on level l (x [rows_l], contiguous, not b).
  void cycle(size_t level, const at::Tensor& b, at::Tensor& x) const;
  /// e ~= A_l^{-1} r on a coarse level by options_.cycle: one cycle (V), two (W), or two
  /// flexible-CG steps preconditioned by the cycle (K).
  void coarse_solve(size_t level, const at::Tensor& r, at::Tensor& e) const;
  /// Chebyshev smoothing of A x = b on level l, from x = 0 when `zero_guess`, else from x (in place).
  void smooth(size_t level, const at::Tensor& b, at::Tensor& x, bool zero_guess) const;

  std::vector<AmgLevel> levels_;
  at::Tensor coarse_inverse_;
  AmgOptions options_;
  std::shared_ptr<Workspace> work_ = std::make_shared<Workspace>();
};

/// Builds the hierarchy of the square matrix `a` (non-zero diagonal required).
AmgHierarchy build_amg(const CsrData& a, const AmgOptions& options);

/// Aggregate of every row of `a` (-1: a row without off-diagonal entries, left out of the
/// coarse space); returns the number of aggregates. Exposed for tests.
int64_t aggregate(const CsrData& a, double strength, std::vector<int64_t>& aggregate_of);

/// The strength threshold of a level: the largest strength / 2^k (k = 0, ..., 10) at which at
/// most `weak_share` of the rows with an off-diagonal have no entry with |a_ij| >= theta
/// sqrt(|a_ii a_jj|). Exposed for tests.
double level_strength(const CsrData& a, double strength, double weak_share);

/// P = (I - w D^{-1} A) T, w = 4 / (3 lambda_max), with T(i, agg(i)) = 1: the tentative
/// prolongator of the constant near-null-space vector, smoothed by one damped Jacobi step
/// (amg_prolongator.cpp; rows with agg(i) = -1 have no T entry). T is not normalised per
/// aggregate, so that T 1_c = 1 and P 1_c = 1 - w D^{-1} A 1: the coarse level's
/// near-null-space vector is again the constant, on every level. (Columns scaled by
/// 1 / sqrt(|aggregate|) span the same space, but then the coarse null-space vector is
/// sqrt(|aggregate|), and the next level's constant tentative prolongator misses it: on
/// log-normal diffusion the iterations grew with n, 26 / 42 / 80 at 1M / 4M / 16.8M DOF.)
CsrData smoothed_prolongator(const CsrData& a, const at::Tensor& inv_diag, double lambda_max,
                             const std::vector<int64_t>& agg, int64_t coarse);

/// Largest eigenvalue of D^{-1} A estimated by `steps` power iterations.
double estimate_lambda_max(const CsrData& a, const at::Tensor& inv_diag, int steps);

}  // namespace tessera::sla::detail
