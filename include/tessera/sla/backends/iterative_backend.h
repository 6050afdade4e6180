#pragma once
/// @file iterative_backend.h
/// The interface every iterative backend implements: tessera's own Krylov methods
/// (Backend::Native: CG, BiCGStab, GMRES, MINRES with every Preconditioner of one process,
/// on any device) and Eigen's (Backend::Eigen: CG, BiCGStab with Jacobi or none). As a
/// direct backend factorises once, an iterative backend prepares a matrix once (its
/// operator and preconditioner set-up) and the prepared solver serves the forward solve
/// A x = b and the adjoint solve A^T y = g of the backward pass.
///
/// @code
///   auto native = tessera::sla::make_iterative_backend(tessera::sla::Backend::Native);
///   tessera::sla::SolveOptions opts;
///   opts.preconditioner = tessera::sla::Preconditioner::AMG;
///   auto solver = native->prepare(A, /*batch=*/0, opts);            // AMG set-up once
///   auto [x, info] = solver->solve(b, /*transpose=*/false, tessera::sla::Method::CG);
///   auto [y, adjoint] = solver->solve(g, /*transpose=*/true, tessera::sla::Method::CG);
/// @endcode

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <vector>

#include "tessera/sla/solve_options.h"
#include "tessera/sla/sparse_tensor.h"

namespace tessera::sla {

struct IterativeResult {
  at::Tensor x;   ///< float64, shape of b
  SolveInfo info; ///< iterations, true relative residual, status
};

/// One matrix prepared for solves with A or A^T (the preconditioner set up once).
class IterativeSolver {
 public:
  virtual ~IterativeSolver() = default;
  /// Solves A x = b (or A^T x = b) with `method` (one the backend supports) and the
  /// prepared options (rtol, atol, maxiter, preconditioner). `b` is float64 [n] or [n, k]
  /// on the matrix's device; columns are solved one after another. Not converging, breaking
  /// down or a failed preconditioner set-up are statuses in info (x finite, or NaN for a
  /// failed set-up), never exceptions.
  virtual IterativeResult solve(const at::Tensor& b, bool transpose, Method method) const = 0;
};

class IterativeBackend {
 public:
  virtual ~IterativeBackend() = default;
  virtual Backend id() const = 0;
  std::string name() const { return to_string(id()); }
  /// Which Krylov methods (CG, BiCGStab, GMRES, MINRES) this backend provides.
  virtual bool supports(Method method) const = 0;
  /// Which preconditioners it applies.
  virtual bool supports(Preconditioner preconditioner) const = 0;
  /// Prepares batch element `batch` of `a` (values float64) for options: checks them
  /// (Unsupported for a method or preconditioner not provided, InvalidInput for bad
  /// tolerances) and sets the preconditioner up.
  virtual std::unique_ptr<IterativeSolver> prepare(const SparseTensor& a, int64_t batch,
                                                   const SolveOptions& options) const = 0;
  /// prepare(a, 0, options) and one solve with options.method.
  IterativeResult solve(const SparseTensor& a, const at::Tensor& b, const SolveOptions& options,
                        bool transpose) const;
};

/// The iterative backend `backend` (Native, Eigen). Throws NotCompiled when it is not
/// compiled in, InvalidInput for one that is not iterative.
std::unique_ptr<IterativeBackend> make_iterative_backend(Backend backend);
/// The same by name ("native", "eigen"), parsed by parse_backend: for the edges.
std::unique_ptr<IterativeBackend> make_iterative_backend(const std::string& name);

/// The iterative backends compiled into this build (Native always).
std::vector<Backend> compiled_iterative_backends();

}  // namespace tessera::sla
