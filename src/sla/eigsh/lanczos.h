#pragma once
// The eigensolver engines behind eigsh(): tessera's block thick-restart Lanczos on ATen
// ops and Spectra's implicitly restarted Lanczos, both on an operator X -> op(X) applied to
// blocks of vectors [n, b]. The caller chooses the operator (A, or (A - σ I)^{-1}) and the
// end of its spectrum; these functions only return Ritz pairs of the operator.

#include <ATen/core/Tensor.h>

#include <functional>
#include <string>

namespace tessera::sla::detail {

/// Y = op(X) for X [n, b] (float64, contiguous); returns [n, b].
using BlockOperator = std::function<at::Tensor(const at::Tensor&)>;

/// Which Ritz values are wanted: largest / smallest algebraic, or largest magnitude.
enum class RitzOrder { LargestAlgebraic, SmallestAlgebraic, LargestMagnitude };

struct LanczosParams {
  int64_t k = 1;          ///< wanted pairs
  int64_t ncv = 20;       ///< Krylov space size m (a multiple of block, m + block <= n)
  int64_t block = 1;      ///< block size b
  int64_t maxiter = 1000; ///< restarts
  double tol = 1e-10;     ///< ||op v - θ v|| <= tol * max |θ| seen
  uint64_t seed = 12345;
  RitzOrder order = RitzOrder::LargestAlgebraic;
};

struct RitzPairs {
  at::Tensor theta;     ///< [k] float64, in the wanted order (best first)
  at::Tensor vectors;   ///< [n, k] float64, orthonormal columns
  int64_t iterations = 0;
  int64_t applications = 0;   ///< vectors op was applied to
  bool converged = false;
  std::string message;
};

/// Block Krylov-Schur (thick-restart block Lanczos with full reorthogonalisation):
/// expands an orthonormal basis Q (rows) by blocks, W = op(Q_j^T), orthogonalised twice
/// against Q; Rayleigh-Ritz on T = Q op Q^T; keeps the best p Ritz vectors and the residual
/// block, and continues until the k wanted Ritz residuals ||R Y_last|| meet the tolerance.
RitzPairs block_lanczos(const BlockOperator& op, int64_t n, const LanczosParams& params);

/// The same with Spectra's SymEigsSolver (single-vector implicitly restarted Lanczos).
/// ncv: k < ncv <= n. Throws NotCompiled when Spectra is not available.
RitzPairs spectra_lanczos(const BlockOperator& op, int64_t n, const LanczosParams& params);

/// True when this build has Spectra.
bool spectra_available();

}  // namespace tessera::sla::detail
