#pragma once
// The eigensolver engines behind eigsh(): tessera's block thick-restart Lanczos on ATen
// ops and Spectra's implicitly restarted Lanczos, both on an operator X -> op(X) applied to
// blocks of vectors [n, b]. The caller chooses the operator (A, or (A - σ I)^{-1}) and the
// end of its spectrum; these functions only return Ritz pairs of the operator.

#include <ATen/core/Tensor.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/sla/eigsh.h"

namespace tessera::sla::detail {

/// The result of an eigsh that did not converge: NaN eigenpairs ([k], [rows, k] of
/// `options`' dtype), NaN residuals and an infinite largest residual, `info` otherwise kept.
EigshResult failed_eigsh(int64_t rows, int64_t k, const at::TensorOptions& options, EigshInfo info);

/// Y = op(X) for X [n, b] (float64, contiguous); returns [n, b].
using BlockOperator = std::function<at::Tensor(const at::Tensor&)>;

/// y = op(x) for one float64 vector of length n (raw arrays, nothing allocated per call).
using VectorOperator = std::function<void(const double* x, double* y)>;

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
  /// thick_restart_lanczos: stop, not converged, once this many vectors were multiplied
  /// (checked at each restart; 0: no limit but maxiter).
  int64_t max_applications = 0;
};

struct RitzPairs {
  at::Tensor theta;     ///< [k] float64, in the wanted order (best first)
  at::Tensor vectors;   ///< [n, k] float64, orthonormal columns
  int64_t iterations = 0;
  int64_t applications = 0;   ///< vectors op was applied to
  bool converged = false;
  std::string message;
  /// thick_restart_lanczos: the k wanted Ritz values of its first run's last Rayleigh-Ritz,
  /// best first (estimates even when it did not converge: eigsh's shift beyond that end).
  std::vector<double> last_ritz_values;
};

/// The engine's parameters for eigsh's options on a matrix of n rows: the Krylov space size
/// m is a multiple of the block b with m >= k + 2b (single-vector engines: block 1 and m <= n).
LanczosParams lanczos_params(const EigshOptions& options, int64_t n, bool single_vector);

/// Where the Lanczos vectors live: the whole vector in one process, or this rank's rows of a
/// vector distributed over ranks, whose inner products and QR are then global. The
/// algorithm is the same; only these three operations know about the ranks.
struct LanczosSpace {
  int64_t local_rows = 0;   ///< rows of a vector held here (n in one process)
  /// H = Q W for basis rows Q [j, local_rows] and a block W [local_rows, b]: [j, b], the
  /// same on every rank.
  std::function<at::Tensor(const at::Tensor& q, const at::Tensor& w)> inner;
  /// W = Q R with Q's columns orthonormal over the whole vector ([local_rows, b]) and R
  /// [b, b] the same on every rank.
  std::function<std::pair<at::Tensor, at::Tensor>(const at::Tensor& w)> qr;
  /// This rank's rows of a block given in full ([n, b] -> [local_rows, b]): the random
  /// starting block is drawn in full on every rank, so any rank count starts alike.
  std::function<at::Tensor(const at::Tensor& full)> local;

  /// The single-process space of vectors of length n.
  static LanczosSpace whole(int64_t n);
};

/// Block Krylov-Schur (thick-restart block Lanczos with full reorthogonalisation):
/// expands an orthonormal basis Q (rows) by blocks, W = op(Q_j^T), orthogonalised twice
/// against Q; Rayleigh-Ritz on T = Q op Q^T; keeps the best p Ritz vectors and the residual
/// block, and continues until the k wanted Ritz residuals ||R Y_last|| meet the tolerance.
/// n is the global length; `space` (whole(n) when null) says where the rows of Q live, and
/// op maps this rank's rows of a block to this rank's rows of its image. The returned
/// vectors are this rank's rows.
RitzPairs block_lanczos(const BlockOperator& op, int64_t n, const LanczosParams& params,
                        const LanczosSpace* space = nullptr);

/// The same with Spectra's SymEigsSolver (single-vector implicitly restarted Lanczos).
/// ncv: k < ncv <= n. Throws NotCompiled when Spectra is not available.
RitzPairs spectra_lanczos(const VectorOperator& op, int64_t n, const LanczosParams& params);

/// A block operator applied to one vector (a column [n, 1] through tensors per call).
VectorOperator one_column(BlockOperator op, int64_t n);

/// Single-vector thick-restart Lanczos (Wu and Simon) on raw float64 vectors: expands
/// V = [v_0 .. v_{m-1}] one product at a time with full reorthogonalisation (classical
/// Gram-Schmidt repeated while it cancels, as ARPACK does), Rayleigh-Ritz on T = V^T op V,
/// and restarts from the best Ritz vectors (k plus up to half the rest, more as they
/// converge: ARPACK's rule) and the residual direction. Converged when every wanted pair has
/// |β y_{m-1}| <= tol max(eps^{2/3}, |θ|) (ARPACK's test). One Krylov space holds one vector
/// of each eigenspace, so the converged pairs are then locked and further runs on the
/// deflated operator, each from a random start orthogonal to them, look for a better pair
/// (a missed copy of a multiple eigenvalue) until one finds none: every copy is found.
/// Needs 1 <= k < ncv < n.
RitzPairs thick_restart_lanczos(const VectorOperator& op, int64_t n, const LanczosParams& params);

/// True when this build has Spectra.
bool spectra_available();

}  // namespace tessera::sla::detail
