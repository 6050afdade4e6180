#pragma once
// tessera's own Krylov solvers, written once on ATen ops (any device). Each algorithm
// lives in its own file and runs from a starting guess until its recursive residual meets
// the tolerance, maxiter is reached, or it breaks down; the driver (krylov_driver.cpp)
// checks the true residual and restarts from it when the recursion has drifted.

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "tessera/sla/solve_options.h"
#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla::detail {

class SpmvPlan;

/// y = A v on 1-D vectors [n].
using LinearOperator = std::function<at::Tensor(const at::Tensor&)>;

/// A LinearOperator that can also write its result into a given vector: z = M^{-1} r without
/// a new vector per application (the AMG cycle). Held in a LinearOperator, it is found by
/// `target<IntoOperator>()`; the fused CG loop then applies it into its own z.
struct IntoOperator {
  std::function<void(const at::Tensor& r, at::Tensor& z)> into;   ///< z [n], contiguous, not r
  /// Optional: the same with a vector of the caller's that is dead meanwhile (CG's q, which
  /// the operator may overwrite: the AMG cycle's finest smoother direction), so the operator
  /// holds one vector less.
  std::function<void(const at::Tensor& r, at::Tensor& z, at::Tensor& scratch)> into_scratch;
  at::Tensor operator()(const at::Tensor& r) const;                ///< into a new vector
};

/// The vector space the methods run in. Single-process by default; a distributed solve
/// sums the inner products over the ranks (and agrees on flags), so that the same
/// algorithm code serves both.
struct KrylovSpace {
  /// <u, v> as a host double.
  std::function<double(const at::Tensor&, const at::Tensor&)> dot;
  /// h = V^T w for the rows v_i of V ([j, n] x [n] -> [j]): GMRES's block of inner products.
  std::function<at::Tensor(const at::Tensor&, const at::Tensor&)> block_dot;
  /// True when `flag` holds anywhere (on any rank).
  std::function<bool(bool)> any;
  /// Length of the global vectors (the default maxiter is 10 times this).
  int64_t global_size = 0;

  /// ||u||_2 in this space.
  double norm(const at::Tensor& u) const;
  /// The single-process space of vectors of length n.
  static KrylovSpace local(int64_t n);
};

struct KrylovParams {
  double tol = 0.0;         ///< absolute tolerance on ||b - A x||_2
  int64_t maxiter = 0;      ///< iterations left
  int64_t restart = 50;     ///< GMRES(m)
  KrylovSpace space;        ///< where inner products are taken
  /// Set (by krylov_solve) when the operator is a local CPU CSR product on float64
  /// vectors: CG then runs its fused loop (run_cg_fused) on this plan.
  const SpmvPlan* plan = nullptr;
  /// CG with a preconditioner that is not a fixed linear map (the AMG K-cycle): the flexible
  /// (Polak-Ribiere) beta = <z_k+1, r_k+1 - r_k> / <z_k, r_k> = -alpha <z_k+1, A p_k> / <z_k, r_k>.
  bool flexible = false;
  /// The fused CG loop may iterate in x0 itself (the driver's own vector) instead of a copy.
  bool x0_in_place = false;
};

struct KrylovResult {
  at::Tensor x;
  int64_t iterations = 0;
  SolveStatus status = SolveStatus::NotConverged;  ///< Converged: recursive residual met tol
  std::string message;
};

/// M^{-1} as the Krylov methods apply it, one of three forms:
///  - the identity (Preconditioner::None): neither member set;
///  - a diagonal (Preconditioner::Jacobi): M^{-1} = diag(inv_diag);
///  - an operator set up before the solve (BlockJacobi, AMG, IC0, ILU0, BoomerAMG):
///    M^{-1} r = apply_set_up(r).
struct KrylovPreconditioner {
  at::Tensor inv_diag;
  LinearOperator apply_set_up;

  static KrylovPreconditioner identity() { return {}; }
  static KrylovPreconditioner diagonal(at::Tensor inv_diag) { return {std::move(inv_diag), {}}; }
  static KrylovPreconditioner set_up(LinearOperator op) { return {{}, std::move(op)}; }
  /// M^{-1} is diagonal (or the identity): the fused CG loop applies it inside its vector pass.
  bool is_diagonal() const { return !apply_set_up; }
  /// z = M^{-1} r
  at::Tensor apply(const at::Tensor& r) const {
    if (apply_set_up) return apply_set_up(r);
    return inv_diag.defined() ? r * inv_diag : r;
  }
};

/// CG's checks at the top of iteration `it` with residual norm `rnorm`: non-finite
/// (Breakdown), converged, iteration cap. Sets out.status (and message) and returns true when
/// the loop must stop. Shared by the generic and the fused loop.
bool cg_should_stop(double rnorm, int64_t it, const KrylovParams& params, KrylovResult& out);

KrylovResult run_cg(const LinearOperator& a, const KrylovPreconditioner& m, const at::Tensor& b, const at::Tensor& x0,
                    const KrylovParams& params);
/// CG on a CPU CSR plan with fused vector passes and no allocation per iteration (same
/// iterates as run_cg up to rounding; M from m as in run_cg, into CG's own z when m's
/// operator is an IntoOperator, lending it q, dead while M^{-1} r is formed, unless flexible).
/// Five vectors: x (x0 itself with params.x0_in_place), r, p, q, z.
KrylovResult run_cg_fused(const SpmvPlan& a, const KrylovPreconditioner& m, const at::Tensor& b, const at::Tensor& x0,
                          const KrylovParams& params);
KrylovResult run_bicgstab(const LinearOperator& a, const KrylovPreconditioner& m, const at::Tensor& b, const at::Tensor& x0,
                          const KrylovParams& params);
KrylovResult run_gmres(const LinearOperator& a, const KrylovPreconditioner& m, const at::Tensor& b, const at::Tensor& x0,
                       const KrylovParams& params);
KrylovResult run_minres(const LinearOperator& a, const KrylovPreconditioner& m, const at::Tensor& b, const at::Tensor& x0,
                        const KrylovParams& params);

/// Solves A x = b (b [n]) with options.method (CG, BiCGStab, GMRES or MINRES) and
/// options.preconditioner; fills info (iterations, true relative residual, status).
/// None and Jacobi (from `diagonal`) are made here; the set-up preconditioners (BlockJacobi,
/// AMG, IC0, ILU0, BoomerAMG) and a user's hook (solve_operator, options.preconditioner None)
/// come as `set_up_preconditioner`, M^{-1} r = (*op)(r), which is used whenever given.
/// `space` (optional) makes the solve distributed: b, the diagonal and the operator act
/// on this rank's entries, and inner products go through the space.
at::Tensor krylov_solve(const LinearOperator& a, const at::Tensor& diagonal, const at::Tensor& b,
                        const SolveOptions& options, SolveInfo& info, const KrylovSpace* space = nullptr,
                        const LinearOperator* set_up_preconditioner = nullptr);

/// The operator v -> A_b v (or A_b^T v) of batch element `batch` of `a`. On CPU with
/// float64 values it holds a CsrOperator (an SpmvPlan: stencil form when the matrix has
/// one and `stencil` is true), which krylov_solve hands to the fused CG loop.
LinearOperator csr_operator(const SparseTensor& a, int64_t batch, bool transpose, bool stencil = true);

/// A LinearOperator backed by an SpmvPlan (what csr_operator returns on CPU float64).
struct CsrOperator {
  std::shared_ptr<const SpmvPlan> plan;
  at::Tensor operator()(const at::Tensor& v) const;
};

}  // namespace tessera::sla::detail
