#pragma once
// log|det A| and sign(det A) of one matrix from CHOLMOD (Cholesky) or UMFPACK (LU).

#include <string>

#include "tessera/sla/backends/direct_backend.h"
#include "tessera/sla/solve_options.h"

namespace tessera::sla::detail {

struct LogdetValue {
  double sign = 0.0;       ///< -1, 0 (singular) or 1
  double logabsdet = 0.0;  ///< -inf when singular
  SolveStatus status = SolveStatus::Converged;  ///< Converged, Singular, NotPositiveDefinite (Cholesky failed)
  std::string backend;
  Method method = Method::Auto;
  std::string message;
};

/// Cholesky: P A P^T = L L^T (or L D L^T), log det = sum log of the pivots. A must be
/// symmetric; NotPositiveDefinite when a pivot is <= 0.
LogdetValue cholmod_logdet(const CsrMatrix& a);
/// LU with pivoting: det from umfpack_dl_get_determinant (mantissa and power of ten).
LogdetValue umfpack_logdet(const CsrMatrix& a);

}  // namespace tessera::sla::detail
