#pragma once
/// @file iterative_backend.h
/// Interface of third-party iterative backends (Eigen's CG and BiCGStab). tessera's own
/// Krylov solvers (backend "native") work on SparseTensor and ATen ops directly.
///
/// @code
///   auto eigen = tessera::sla::make_iterative_backend("eigen");
///   auto result = eigen->solve(csr, b, options, /*transpose=*/false);
/// @endcode

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>

#include "tessera/sla/backends/direct_backend.h"
#include "tessera/sla/solve_options.h"

namespace tessera::sla {

struct IterativeResult {
  at::Tensor x;   ///< float64, shape of b
  SolveInfo info; ///< iterations, relative residual, status
};

class IterativeBackend {
 public:
  virtual ~IterativeBackend() = default;
  virtual std::string name() const = 0;
  virtual bool supports(Method method) const = 0;
  /// Solves A x = b (or A^T x = b) with options.method, rtol, maxiter, preconditioner.
  /// `b` is float64 CPU [n] or [n, k] (columns solved one after another).
  virtual IterativeResult solve(const CsrMatrix& a, const at::Tensor& b, const SolveOptions& options,
                                bool transpose) const = 0;
};

/// "eigen". Throws NotCompiled when absent, InvalidInput for an unknown name.
std::unique_ptr<IterativeBackend> make_iterative_backend(const std::string& name);

}  // namespace tessera::sla
