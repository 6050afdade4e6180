#pragma once
/// @file solve.h
/// Differentiable sparse solve `x = A^{-1} b`, property detection and backend dispatch.
///
/// Gradients come from ONE adjoint solve `A^T λ = g` that reuses the forward
/// factorisation (direct backends) or the same Krylov method and preconditioner (native):
/// `db = λ`, `dA_ij = -λ_i x_j` on the stored pattern only. The autograd graph has one node.
///
/// @code
///   auto A = tessera::sla::poisson2d(32);
///   at::Tensor values = A.values().clone().requires_grad_();
///   at::Tensor b = at::ones({A.rows()}, at::kDouble).requires_grad_();
///   auto [x, info] = tessera::sla::solve(A.with_values(values), b);   // backend "auto"
///   x.sum().backward();                                                // values.grad(), b.grad()
/// @endcode
///
/// Dispatch of `backend = "auto"` (see choose_solver):
///  - values off the CPU: native Krylov (CG for an SPD candidate, BiCGStab otherwise);
///  - CPU, estimated factor memory (estimated_factor_bytes) within
///    options.memory_budget_bytes (default 2 GiB) and a direct backend
///    compiled in: CHOLMOD (else Eigen) Cholesky for an SPD candidate — symmetric with a
///    positive diagonal — falling back to LDLT, then LU, when Cholesky meets a non-positive
///    pivot; UMFPACK (else SuperLU, else Eigen) LU otherwise;
///  - larger systems: native CG for an SPD candidate (MINRES if CG finds negative
///    curvature), MINRES for other symmetric matrices, BiCGStab otherwise (GMRES if
///    BiCGStab breaks down).
/// A named backend is used as named (NotCompiled when it is not in this build); a named
/// method is used without fallback.

#include <ATen/core/Tensor.h>

#include <string>
#include <utility>

#include "tessera/sla/solve_options.h"
#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla {

/// Structural and numerical properties of one matrix (batch element).
struct MatrixProperties {
  bool square = false;
  bool symmetric = false;            ///< pattern and values (to a relative 1e-12 of max |a|)
  bool positive_diagonal = false;    ///< every a_ii stored and > 0
  bool diagonally_dominant = false;  ///< weakly: |a_ii| >= sum_{j != i} |a_ij| for every row
  /// Symmetric with a positive diagonal: SPD is then tried by Cholesky (or CG).
  bool spd_candidate() const { return symmetric && positive_diagonal; }
};

MatrixProperties detect_properties(const SparseTensor& a, int64_t batch_index = 0);

/// Rough memory of a sparse factorisation: nnz * max(1, n^{1/3}) entries (the order of
/// nested-dissection fill for 3D meshes), lowered to 4 n log2 n when the bandwidth of the
/// given ordering is at most 4 sqrt(n) (a 2D mesh: separators of ~sqrt(n) unknowns) and
/// to n (bandwidth + 1) for banded matrices; 12 bytes per entry, doubled for LU.
double estimated_factor_bytes(const SparseTensor& a, bool lu);
/// The same estimate from the counts: n rows, nnz stored entries, bandwidth max |i - j| of
/// the stored entries (what a distributed matrix can sum over its ranks).
double estimated_factor_bytes(int64_t rows, int64_t nnz, int64_t bandwidth, bool lu);

/// What auto dispatch (or the user's choice) resolves to.
struct SolverChoice {
  Backend backend = Backend::Auto;  ///< never Auto once chosen
  Method method = Method::Auto;     ///< a Krylov method runs on an iterative backend, else a factorisation
  bool allow_fallback = true; ///< Cholesky -> LDLT -> LU, CG -> MINRES, BiCGStab -> GMRES
};

/// Applies the rule documented above. Throws NotCompiled for a named backend that is absent.
SolverChoice choose_solver(const SparseTensor& a, const MatrixProperties& props, const SolveOptions& options);

/// Solves A x = b. b: [n] or [n, k] (shared by A's batch) or [*batch, n] / [*batch, n, k].
/// Differentiable in A's values and b. Numerical failures (singular, not converged,
/// breakdown) are reported in SolveInfo (the worst over the batch and right-hand sides);
/// a singular direct solve returns x filled with NaN, and a direct solve whose relative
/// residual exceeds 1e-6 (a near-zero pivot the backend let through) is reported Singular. Bad input throws (DimensionMismatch,
/// InvalidInput for an empty matrix or NaN/Inf in values or b).
std::pair<at::Tensor, SolveInfo> solve(const SparseTensor& a, const at::Tensor& b,
                                       const SolveOptions& options = {});

}  // namespace tessera::sla
