#pragma once
/// @file dsolve.h
/// Differentiable distributed solve: x = A^{-1} b with A a DSparseTensor, by Krylov methods
/// or (backend Mumps) by MUMPS's distributed LU.
///
/// The Krylov methods are tessera's own (CG, BiCGStab, GMRES, MINRES), the same code as
/// the single-process native backend with inner products summed over the ranks, so the
/// iterations match the single-process run up to the order of floating-point sums.
/// Preconditioners: none, Jacobi (the owned diagonal), BlockJacobi (each rank's diagonal
/// block factorised locally: CHOLMOD Cholesky when it looks SPD, else UMFPACK LU), BoomerAMG
/// (hypre's algebraic multigrid on the whole distributed matrix: each rank hands hypre its
/// own rows, nothing is gathered; one V-cycle per application; needs a build with hypre,
/// NotCompiled otherwise). AMG, IC0 and ILU0 are single-process only (Unsupported here).
///
/// Backend Mumps: each rank hands MUMPS its own rows (nothing gathered but b and x, which
/// MUMPS wants on rank 0); the LU factors are kept for the adjoint solve (A^T λ = g from the
/// same factors). Method Auto or LU. A MUMPS error or a singular A (null pivots) throws
/// InvalidInput naming MUMPS's code on every rank; NotCompiled in a build without MUMPS.
///
/// Backend Auto (the default) decides across ranks as one process does
/// (src/sla/dist/dsolve_dispatch.h): a named Krylov method runs natively as given; with
/// method Auto (or LU), MUMPS's LU when the estimated LU factor of the global matrix
/// (estimated_factor_bytes from the global nnz and bandwidth) fits
/// options.memory_budget_bytes, else native CG with BoomerAMG for an SPD candidate
/// (symmetric by a probe ||A x - A^T x|| <= 1e-12 ||A x||, positive diagonal), MINRES for
/// another symmetric A, GMRES with BoomerAMG otherwise (without hypre: the options'
/// preconditioner; without MUMPS: always the Krylov path). SolveInfo's backend ("mumps" or
/// "native") and method say which ran.
///
/// Gradients: one distributed adjoint solve A^T λ = g with the same method (applied with
/// rmatvec) and the forward solve's preconditioner set-up (BoomerAMG: the same hierarchy
/// for CG and MINRES, one on A^T built at the first backward otherwise), then db = λ and
/// dA_ij = -λ_i x_j on the stored pattern, where x_j of halo columns arrives by a halo
/// exchange.
///
/// @code
///   auto [x, info] = tessera::sla::dsolve(dA, b_owned, options);  // collective
///   loss(x).backward();   // every rank
/// @endcode

#include <ATen/core/Tensor.h>

#include <utility>

#include "tessera/sla/dist/dsparse_tensor.h"
#include "tessera/sla/preconditioners.h"
#include "tessera/sla/solve_options.h"

namespace tessera::sla {

/// b: [owned] or [owned, k] (columns solved one after another). options.backend must be
/// "auto", "native" or "mumps"; options.method Auto means CG with native, LU with mumps,
/// and the dispatch above with auto. The SolveInfo is the same on every
/// rank (residual ||A x - b|| / ||b|| over the global vectors).
std::pair<at::Tensor, SolveInfo> dsolve(const DSparseTensor& a, const at::Tensor& b,
                                        const SolveOptions& options = {});

/// x = A^{-T} b with the same methods, preconditioners and MUMPS factors as dsolve; records
/// no graph (the adjoint solve on its own, e.g. for implicit gradients). Collective.
std::pair<at::Tensor, SolveInfo> dsolve_transposed(const DSparseTensor& a, const at::Tensor& b,
                                                   const SolveOptions& options = {});

/// Builds options.preconditioner (BlockJacobi or BoomerAMG) for `a` alone, as dsolve does,
/// to see what its set-up costs (collective; seconds is the slowest rank's).
PreconditionerSetup dsetup_preconditioner(const DSparseTensor& a, const SolveOptions& options);

}  // namespace tessera::sla
