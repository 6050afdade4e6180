#pragma once
/// @file condition.h
/// Detecting numerically singular factorisations the same way for every backend.
///
/// Only SuperLU reliably meets an exactly zero pivot on a rank-deficient matrix; the
/// others finish with pivots of size ~eps. So after every successful factorisation the
/// backend estimates rcond = 1 / (||A||_1 ||A^{-1}||_1) with Hager's 1-norm estimator
/// (Higham, ACM TOMS 14 (1988): a few solves with A and A^T through the new factors) and
/// reports `Singular` when rcond < kSingularRcond, as LAPACK's xGESVX does.

#include <functional>
#include <string>

#include "tessera/sla/backends/direct_backend.h"

namespace tessera::sla::backends::detail {

/// rcond below this is "singular to working precision" (LAPACK's dlamch('E') = eps / 2).
constexpr double kSingularRcond = 1.1102230246251565e-16;

/// x <- A^{-1} x (or A^{-T} x when `transpose`) in place, x of length n.
using InPlaceSolve = std::function<void(double* x, bool transpose)>;

/// Estimate of ||A^{-1}||_1 (a lower bound, usually within a factor 3); +inf when a
/// solve produced a non-finite entry.
double estimate_inverse_norm1(int64_t n, const InPlaceSolve& solve);

/// Estimate of the reciprocal 1-norm condition number; 0 when the inverse is infinite.
double estimate_rcond(const CsrMatrix& a, const InPlaceSolve& solve);

/// Converged, or Singular with `message` set when the rcond estimate is below
/// kSingularRcond. `who` names the backend in the message.
SolveStatus status_from_rcond(const CsrMatrix& a, const InPlaceSolve& solve, const std::string& who,
                              std::string& message);

}  // namespace tessera::sla::backends::detail
