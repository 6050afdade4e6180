#pragma once
// Smoothed-aggregation algebraic multigrid (Vanek, Mandel, Brezina 1996) as a Krylov
// preconditioner. Set-up on the CPU: strength of connection, greedy aggregation (every row
// with an off-diagonal in an aggregate), tentative prolongator (the constant vector, not
// normalised, so the constant is the near-null-space vector of every level), one damped-Jacobi smoothing
// step P = (I - w D^{-1} A) T, and the Galerkin coarse operator A_c = P^T A P by a fused
// sparse triple product. The hierarchy is a list of CSR tensors; the cycle (V, W or K by
// AmgOptions::cycle; Chebyshev smoothing, a dense coarsest solve) is written in ATen ops, so it
// runs where the tensors are.
//
//   AmgHierarchy h = build_amg(csr_of(A, 0), AmgOptions{});
//   at::Tensor z = h.vcycle(r);   // z ~= A^{-1} r, a symmetric positive definite map for SPD A

#include <ATen/core/Tensor.h>

#include <vector>

#include "sla/precond/csr_data.h"
#include "tessera/sla/solve_options.h"

namespace tessera::sla::detail {

struct AmgLevel {
  CsrData a;              ///< operator of this level
  CsrData p;              ///< prolongator to this level from the next coarser one (not on the last level);
                          ///< the restriction R = P^T is applied through P, never stored
  at::Tensor inv_diag;    ///< 1 / a_ii (smoother)
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

  const std::vector<AmgLevel>& levels() const { return levels_; }
  /// Dense inverse of the coarsest operator (undefined when that level is too large: then it
  /// is only smoothed).
  const at::Tensor& coarse_inverse() const { return coarse_inverse_; }
  /// sum of nnz over levels / nnz of the finest level.
  double operator_complexity() const;
  /// Bytes held by the hierarchy's tensors (excluding the finest operator, owned by the caller).
  int64_t bytes() const;

  AmgSetupSeconds setup_seconds;   ///< filled by build_amg

 private:
  at::Tensor cycle(size_t level, const at::Tensor& b) const;
  /// e ~= A_l^{-1} r on a coarse level by options_.cycle: one cycle (V), two (W), or two
  /// flexible-CG steps preconditioned by the cycle (K).
  at::Tensor coarse_solve(size_t level, const at::Tensor& r) const;
  at::Tensor smooth(const AmgLevel& level, const at::Tensor& b, const at::Tensor& x) const;

  std::vector<AmgLevel> levels_;
  at::Tensor coarse_inverse_;
  AmgOptions options_;
};

/// Builds the hierarchy of the square matrix `a` (non-zero diagonal required).
AmgHierarchy build_amg(const CsrData& a, const AmgOptions& options);

/// Aggregate of every row of `a` (-1: a row without off-diagonal entries, left out of the
/// coarse space); returns the number of aggregates. Exposed for tests.
int64_t aggregate(const CsrData& a, double strength, std::vector<int64_t>& aggregate_of);

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
