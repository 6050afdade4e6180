#pragma once
/// @file solve_options.h
/// Typed options and the outcome report of sparse solves.
///
/// @code
///   tessera::sla::SolveOptions opts;
///   opts.backend = tessera::sla::Backend::Cholmod;   // names parse at the edges: parse_backend("cholmod")
///   opts.method = tessera::sla::Method::Cholesky;
///   auto [x, info] = tessera::sla::solve(A, b, opts);
///   if (info.status != tessera::sla::SolveStatus::Converged) { ... }
/// @endcode

#include <cstdint>
#include <string>

namespace tessera::sla {

/// Who solves. Auto: the rule documented in solve.h. Native: tessera's own Krylov methods
/// (CG, BiCGStab, GMRES, MINRES; any device). Eigen: Eigen's direct (Cholesky, LDLT, LU) and
/// iterative (CG, BiCGStab) solvers. Cholmod (Cholesky), Umfpack (LU), Superlu (LU): direct.
/// A backend switched off at build time (TESSERA_WITH_<NAME>=OFF) throws NotCompiled.
enum class Backend { Auto, Native, Eigen, Cholmod, Umfpack, Superlu, Mumps };  // Mumps: distributed (dsolve) only

/// How the system is solved. Direct: Cholesky, LDLT, LU. Krylov: CG, BiCGStab, GMRES, MINRES.
enum class Method { Auto, Cholesky, LDLT, LU, CG, BiCGStab, GMRES, MINRES };

/// CG, BiCGStab, GMRES or MINRES: run by an iterative backend (the others factorise).
bool is_krylov(Method method);

/// Jacobi: M = diag(A). BlockJacobi (distributed solves): M = each rank's diagonal block
/// of A, factorised by a direct backend; on one process it is a direct solve.
/// AMG: one V-cycle of tessera's smoothed-aggregation multigrid (SPD A, CG).
/// IC0 / ILU0: incomplete Cholesky (SPD A) / LU without fill, by triangular solves.
/// BoomerAMG: one V-cycle of hypre's BoomerAMG (when built with hypre).
/// The native Krylov solvers of one process take all of them; set-up happens once per
/// solve() and is reused by the adjoint solve of the backward pass.
enum class Preconditioner { None, Jacobi, BlockJacobi, AMG, IC0, ILU0, BoomerAMG };

/// Recursion of the AMG cycle below the finest level: V (each coarse level cycled once), W
/// (twice, e = B r + B (r - A_c B r), symmetric), K (two flexible-CG steps preconditioned by
/// the next level's cycle, Notay and Vassilevski 2008; a nonlinear preconditioner, so the
/// outer CG takes the flexible (Polak-Ribiere) beta).
enum class AmgCycle { V, W, K };

/// Parameters of Preconditioner::AMG.
struct AmgOptions {
  double strength = 0.08;       ///< a_ij is strong when |a_ij| >= theta sqrt(|a_ii a_jj|), theta = strength / 2^k:
  double weak_share = 0.1;      ///< on each level the smallest k (at most 10) that leaves at most this share of the
                                ///< rows with off-diagonals without a strong connection (2D levels: k = 0; 3D
                                ///< Poisson's coarse levels: k = 1, 2, ...); 1 keeps theta = strength everywhere
  AmgCycle cycle = AmgCycle::V;  ///< K only with Method::CG (flexible); V and W with any method
  int smoother_degree = 2;      ///< Chebyshev degree of the pre- and post-smoothing
  double smoother_ratio = 30;   ///< Chebyshev interval [lambda_max / ratio, 1.1 lambda_max]
  int64_t coarse_size = 300;    ///< coarsen until a level has at most this many rows
  int max_levels = 25;
};

enum class SolveStatus {
  Converged,     ///< direct solve succeeded, or the Krylov residual met the tolerance
  NotConverged,  ///< maxiter reached without meeting the tolerance
  Singular,      ///< the factorisation found the matrix (numerically) singular
  Breakdown,     ///< a Krylov method broke down (e.g. rho = 0 in BiCGStab)
  NotPositiveDefinite,  ///< Cholesky or CG met a non-positive pivot / curvature
};

struct SolveOptions {
  Backend backend = Backend::Auto;
  Method method = Method::Auto;
  double rtol = 1e-10;           ///< Krylov: stop when ||r|| <= max(rtol ||b||, atol)
  double atol = 0.0;
  int64_t maxiter = 0;           ///< Krylov: 0 means 10 n (capped at 100000)
  Preconditioner preconditioner = Preconditioner::Jacobi;
  AmgOptions amg;                ///< parameters of Preconditioner::AMG
  int64_t gmres_restart = 50;    ///< Method::GMRES: GMRES(m) restarts every m iterations
  /// Backend::Auto on the CPU factorises when the estimated factor (estimated_factor_bytes)
  /// fits in this many bytes, and runs a native Krylov method otherwise.
  double memory_budget_bytes = 2.0 * 1024 * 1024 * 1024;
  /// Native Krylov on the CPU in float64: A v runs in stencil form when A has one (a
  /// constant-coefficient 5- or 7-point pattern), else in symmetric SELL or SELL-C-σ when the
  /// cheap rule on row lengths picks SELL (SpmvFormat::Auto, prepared_matvec.h); false keeps the plain CSR
  /// product. SolveInfo::spmv_format says which ran.
  bool stencil_spmv = true;
};

struct SolveInfo {
  std::string backend;       ///< the backend that actually ran
  Method method = Method::Auto;  ///< the method that actually ran
  SolveStatus status = SolveStatus::Converged;
  int64_t iterations = 0;    ///< Krylov iterations (0 for direct solves)
  double residual = 0.0;     ///< relative residual ||A x - b|| / ||b|| (max over right-hand sides)
  std::string message;       ///< human-readable detail when status is not Converged
  /// Native Krylov on the CPU: the storage A v ran in ("csr", "stencil", "sell-8-8",
  /// "sell-8-256": C and σ); empty for other backends and devices.
  std::string spmv_format;
};

const char* to_string(Backend backend);
const char* to_string(Method method);
const char* to_string(SolveStatus status);
/// The worse of two statuses (merging columns or batch elements): Converged < NotConverged <
/// Breakdown < NotPositiveDefinite < Singular.
SolveStatus worse_status(SolveStatus a, SolveStatus b);
const char* to_string(Preconditioner preconditioner);
/// Parses "auto", "native", "eigen", "cholmod", "umfpack", "superlu", "mumps"; throws InvalidInput
/// naming the accepted values otherwise. The one place backend names become a Backend.
Backend parse_backend(const std::string& name);
/// Parses "none", "jacobi", "block-jacobi", "amg", "ic0", "ilu0", "boomeramg".
Preconditioner parse_preconditioner(const std::string& name);
/// Parses "auto", "cholesky", "ldlt", "lu", "cg", "bicgstab", "gmres", "minres";
/// throws InvalidInput naming the accepted values otherwise.
Method parse_method(const std::string& name);

}  // namespace tessera::sla
