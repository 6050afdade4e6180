#pragma once
/// @file eigsh.h
/// A few eigenpairs of a large sparse symmetric matrix, differentiable in its values.
///
/// Backends: "native" (block thick-restart Lanczos, i.e. a block Krylov-Schur method with
/// full reorthogonalisation, on ATen ops; block size > 1 finds multiple eigenvalues such as
/// those of the 2D Poisson matrix), "lanczos" (tessera's single-vector thick-restart Lanczos
/// on raw CPU arrays, ARPACK's restart and convergence rules) and "spectra" (Spectra's
/// implicitly restarted Lanczos on the CPU). Spectra, like ARPACK, picks up the further
/// copies of a multiple eigenvalue only through rounding; "lanczos" locks its converged pairs
/// and searches the deflated operator from random starts until no better pair appears, so
/// it finds every copy. The default, "auto", runs "lanczos" for the largest or smallest
/// eigenpairs of a CPU matrix and the native method for shift-invert; see EigshBackend.
/// At an end of a clustered spectrum (2D Poisson at n = 10^6: relative gaps ~1e-5) a
/// restarted Krylov run on A crawls, so "auto" gives that run a budget of products of about
/// what shift-invert would cost (100 solves with a Cholesky factor of the estimated size,
/// estimated_factor_bytes, in products with A and the basis; at least 2 ncv), and when it has
/// not converged by then and the factor fits SolveOptions' default memory budget, "lanczos"
/// runs on (A - σ I)^{-1} with σ beyond the wanted end: a guess one span of the Ritz
/// estimates past the best one, else Gershgorin's bound (else that bound moved out by 1e-6 of
/// the spread, when it is an eigenvalue), the first whose ±(A - σ I) Cholesky factorises,
/// which certifies σ < λ_min (resp. σ > λ_max), so that the eigenvalues nearest σ are the
/// wanted ones. The eigenpairs returned, their order and gradients are the same in meaning;
/// EigshInfo::shift_invert and sigma say that it ran, and operator_applications counts the
/// products and the solves. `Which::Nearest` works by shift-invert: the Lanczos method
/// runs on (A - σ I)^{-1}, applied by a direct factorisation of A - σ I (the backends of
/// solve()). When the Krylov space would cover the whole space (n small) the native backend
/// (and auto) uses a dense eigensolver.
///
/// Convergence is judged by the Ritz residual: native accepts a pair when
/// ||A v - λ v|| <= tol * ||A||_est (||A||_est the largest |Ritz value| seen), lanczos and Spectra when
/// ||A v - λ v|| <= tol * max(|λ|, eps^(2/3)) (ARPACK's rule); for shift-invert the test is
/// made on (A - σ I)^{-1}. The true residuals ||A v_i - λ_i v_i||
/// are recomputed with A at the end and reported in EigshInfo.
///
/// Gradients (one autograd node, no unrolled iterations):
///  - eigenvalues by Hellmann-Feynman, dλ/dA_ij = v_i v_j on the stored pattern;
///  - eigenvectors, for simple eigenvalues: dL/dA = -w v^T on the pattern, where
///    (A - λ I + c v v^T) w = (I - v v^T) dL/dv is solved by MINRES (matrix-free, one solve
///    per eigenvector whose gradient is non-zero). An eigenvalue closer than 1e-8 ||A||
///    to another computed one, or a MINRES solve that does not converge, throws Unsupported.
/// Each eigenvector is normalised (||v|| = 1) with its largest-magnitude entry positive.
///
/// @code
///   auto A = tessera::sla::poisson2d(20);
///   at::Tensor values = A.values().clone().requires_grad_();
///   tessera::sla::EigshOptions opts;
///   opts.k = 4;
///   opts.which = tessera::sla::Which::Smallest;
///   auto r = tessera::sla::eigsh(A.with_values(values), opts);   // r.eigenvalues ascending [4]
///   r.eigenvalues.sum().backward();                               // values.grad() = sum_k v_k v_k^T on the pattern
/// @endcode

#include <ATen/core/Tensor.h>

#include <string>

#include "tessera/sla/solve_options.h"
#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla {

/// Which end of the spectrum: largest or smallest algebraic, or nearest to sigma.
enum class Which { Largest, Smallest, Nearest };

/// Who computes the eigenpairs: Native (tessera's block Lanczos), Lanczos (tessera's
/// single-vector thick-restart Lanczos, CPU), Spectra (Spectra's implicitly restarted
/// Lanczos; NotCompiled without Eigen and Spectra), or Auto: Lanczos for Which::Largest and
/// Which::Smallest of a CPU matrix (turning to shift-invert beyond the end when the run on A
/// spends its budget: see above), Native otherwise (shift-invert, other devices, small n).
/// EigshInfo::backend names the one used.
enum class EigshBackend { Auto, Native, Spectra, Lanczos };

struct EigshOptions {
  int64_t k = 6;                     ///< number of eigenpairs, 1 <= k < n
  Which which = Which::Largest;
  double sigma = 0.0;                ///< shift for Which::Nearest
  EigshBackend backend = EigshBackend::Auto;
  double tol = 1e-10;                ///< relative Ritz residual tolerance (see above)
  int64_t ncv = 0;                   ///< Krylov space size; 0: max(2k + 2 block, 20), at most n
  int64_t block_size = 0;            ///< native: 0 means min(k, 3)
  int64_t maxiter = 1000;            ///< restarts (native, lanczos) or Spectra iterations
  Backend solver_backend = Backend::Auto;  ///< backend solving with A - σ I (shift-invert)
  uint64_t seed = 12345;             ///< seed of the random starting block
};

struct EigshInfo {
  std::string backend;               ///< "native", "native (dense)", "lanczos" or "spectra"
  SolveStatus status = SolveStatus::Converged;  ///< Converged, NotConverged, Singular (A - σ I)
  int64_t iterations = 0;            ///< restarts (native, lanczos) / iterations (spectra)
  int64_t operator_applications = 0; ///< products with A or solves with A - σ I
  bool shift_invert = false;         ///< the method ran on (A - σ I)^{-1}: Which::Nearest, or Auto at an end
  double sigma = 0.0;                ///< σ when shift_invert
  at::Tensor residuals;              ///< ||A v_i - λ_i v_i|| per eigenpair, float64 [k]
  double max_residual = 0.0;         ///< max of residuals
  std::string message;
};

struct EigshResult {
  at::Tensor eigenvalues;   ///< [k], ascending, A's dtype; differentiable in A's values
  at::Tensor eigenvectors;  ///< [n, k], column i belongs to eigenvalues[i]; differentiable
  EigshInfo info;
};

/// k eigenpairs of the symmetric matrix A (one matrix: values [nnz]; use SparseTensorList
/// or a loop for batches). Throws InvalidInput for k out of [1, n), DimensionMismatch for a
/// non-square A, InvalidInput for NaN/Inf or a clearly non-symmetric A, NotCompiled for an
/// absent backend. Numerical outcomes (not converged, A - σ I singular) are in info.status.
EigshResult eigsh(const SparseTensor& a, const EigshOptions& options = {});

const char* to_string(Which which);
const char* to_string(EigshBackend backend);
/// Parses "auto", "native", "spectra", "lanczos"; throws InvalidInput naming them otherwise.
EigshBackend parse_eigsh_backend(const std::string& name);

}  // namespace tessera::sla
