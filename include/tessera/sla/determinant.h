#pragma once
/// @file determinant.h
/// det, logdet and slogdet of a sparse square matrix from a sparse factorisation (never a
/// dense one), differentiable in the values.
///
/// Forward: CHOLMOD Cholesky (P A P^T = L L^T, log det = 2 sum log L_jj) for a symmetric
/// matrix with a positive diagonal; when it is not positive definite, or the matrix is not
/// symmetric, UMFPACK LU (det = umfpack_dl_get_determinant). Backend::Cholmod or
/// Backend::Umfpack forces one (Cholmod on a non-SPD matrix reports NotPositiveDefinite);
/// NotCompiled when the one needed is switched off at build time.
///
/// Backward: d log|det A| / dA_ij = (A^{-T})_ij, wanted on A's pattern only. It is computed
/// by selected inversion: a sparse LDU of P A P^T without pivoting on the pattern of
/// A + A^T (AMD ordering) and the Takahashi equations Z = D^{-1} L^{-1} + (I - U) Z,
/// Z = U^{-1} D^{-1} + Z (I - L), which give Z = (P A P^T)^{-1} on the pattern of the factor
/// column by column from the last. Both passes cost the order of the factorisation's flops
/// (sum over columns k of |L(:,k)| |L(k,:)|) and memory three times the factor's; no solve
/// per row. Without pivoting this is stable for SPD and diagonally dominant matrices; a
/// pivot below 1e-13 max|a_ij| makes backward throw Unsupported. det's gradient is
/// det(A) A^{-T}; slogdet's sign has none.
///
/// Numerical outcomes are in DetInfo: a singular A gives status Singular, sign 0 and
/// log|det| = -inf (det 0); logdet of a matrix with det < 0 gives NaN with status
/// NotPositiveDefinite and a message (use slogdet). Bad input throws: non-square
/// (DimensionMismatch), empty, NaN/Inf (InvalidInput).
///
/// @code
///   auto A = tessera::sla::poisson2d(16);
///   at::Tensor values = A.values().clone().requires_grad_();
///   auto [ld, info] = tessera::sla::logdet(A.with_values(values));
///   ld.backward();   // values.grad() = (A^{-T})_ij on the pattern
/// @endcode

#include <ATen/core/Tensor.h>

#include <string>
#include <utility>

#include "tessera/sla/solve_options.h"
#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla {

struct DetOptions {
  Backend backend = Backend::Auto;   ///< Auto, Cholmod, Umfpack
};

struct DetInfo {
  std::string backend;            ///< the backend that ran (the last batch element's)
  Method method = Method::Auto;   ///< Cholesky or LU
  SolveStatus status = SolveStatus::Converged;  ///< Converged, Singular, NotPositiveDefinite
  std::string message;
};

struct SlogdetResult {
  at::Tensor sign;        ///< [*batch] (-1, 0 or 1); no gradient
  at::Tensor logabsdet;   ///< [*batch] log|det A|; differentiable
  DetInfo info;           ///< the worst outcome over the batch
};

SlogdetResult slogdet(const SparseTensor& a, const DetOptions& options = {});
/// log det A (NaN and status NotPositiveDefinite where det A < 0).
std::pair<at::Tensor, DetInfo> logdet(const SparseTensor& a, const DetOptions& options = {});
/// det A = sign exp(log|det A|) (may overflow to inf for large n: prefer slogdet).
std::pair<at::Tensor, DetInfo> det(const SparseTensor& a, const DetOptions& options = {});

}  // namespace tessera::sla
