#pragma once
// Incomplete factorisations without fill, as Krylov preconditioners (CPU, sequential
// triangular solves):
//   ILU(0): A ~= L U on the pattern of A (L unit lower, U upper), for any A with a non-zero
//           diagonal; apply M^{-1} r = U^{-1} L^{-1} r, and M^{-T} r = L^{-T} U^{-T} r.
//   IC(0):  A ~= L L^T on the lower triangle of an SPD A; apply L^{-T} L^{-1} r (symmetric).
// Where no fill is dropped (e.g. a tridiagonal A) both are exact factorisations.
//
//   IncompleteFactor f = incomplete_lu0(csr_of(A, 0));
//   if (f.status == SolveStatus::Converged) z = f.apply(r, /*transpose=*/false);

#include <ATen/core/Tensor.h>

#include <string>

#include "sla/precond/csr_data.h"
#include "tessera/sla/solve_options.h"

namespace tessera::sla::detail {

struct IncompleteFactor {
  bool cholesky = false;  ///< IC(0): `factor` holds L (lower triangle with diagonal)
  CsrData factor;         ///< ILU(0): L (strict lower, unit diagonal implied) and U in A's pattern
  at::Tensor diag_pos;    ///< int64 [n]: position of the diagonal entry of each row in `factor`
  SolveStatus status = SolveStatus::Converged;  ///< Singular / NotPositiveDefinite on a bad pivot
  std::string message;

  /// z = M^{-1} r (or M^{-T} r); r [n] on any device (solved on the CPU).
  at::Tensor apply(const at::Tensor& r, bool transpose) const;
};

/// ILU(0) of a square matrix with sorted rows.
IncompleteFactor incomplete_lu0(const CsrData& a);
/// IC(0) of a symmetric matrix with sorted rows (only its lower triangle is read).
IncompleteFactor incomplete_cholesky0(const CsrData& a);

}  // namespace tessera::sla::detail
