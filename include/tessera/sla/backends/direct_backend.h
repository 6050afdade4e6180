#pragma once
/// @file direct_backend.h
/// The interface every direct (factorising) backend implements: Eigen, CHOLMOD, UMFPACK,
/// SuperLU. One factorisation serves the forward solve A x = b and the adjoint solve
/// A^T y = g of the backward pass.
///
/// @code
///   auto backend = tessera::sla::make_direct_backend(tessera::sla::Backend::Cholmod);   // NotCompiled if absent
///   auto factor = backend->factorize(csr, Method::Cholesky);
///   if (factor->status() == SolveStatus::Converged) x = factor->solve(b, /*transpose=*/false);
/// @endcode

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <vector>

#include "tessera/sla/solve_options.h"

namespace tessera::sla {

/// A matrix in plain CSR form as backends receive it: CPU, contiguous, `row_ptr` and
/// `col_idx` int64 (1-D, rows + 1 and nnz entries), `values` float64 1-D (nnz), full
/// (general) storage — both triangles present even for symmetric matrices, column indices
/// sorted within each row, no duplicates.
struct CsrMatrix {
  int64_t rows = 0;
  int64_t cols = 0;
  at::Tensor row_ptr;
  at::Tensor col_idx;
  at::Tensor values;
};

/// A computed factorisation. Solves with the matrix or its transpose, any number of times.
class Factorization {
 public:
  virtual ~Factorization() = default;
  /// Converged when usable; Singular / NotPositiveDefinite otherwise (then solve throws).
  virtual SolveStatus status() const = 0;
  virtual std::string message() const { return {}; }
  /// x = A^{-1} b (or A^{-T} b). `b` is float64 CPU, [n] or [n, k]; returns the same shape.
  virtual at::Tensor solve(const at::Tensor& b, bool transpose) const = 0;
  /// The method this factorisation used (Cholesky, LDLT or LU).
  virtual Method method() const = 0;
  virtual std::string backend() const = 0;
};

class DirectBackend {
 public:
  virtual ~DirectBackend() = default;
  virtual std::string name() const = 0;
  /// Which of Cholesky / LDLT / LU this backend provides.
  virtual bool supports(Method method) const = 0;
  /// Factorises `a`. A numerically singular or (for Cholesky) indefinite matrix is not an
  /// exception: it returns a Factorization whose status() says so.
  virtual std::unique_ptr<Factorization> factorize(const CsrMatrix& a, Method method) const = 0;
};

/// The direct backend `backend` (Eigen, Cholmod, Umfpack, Superlu). Throws NotCompiled when
/// it is not compiled in, InvalidInput for one that is not direct (Auto, Native).
std::unique_ptr<DirectBackend> make_direct_backend(Backend backend);
/// The same by name ("eigen", "cholmod", ...), parsed by parse_backend: for the edges.
std::unique_ptr<DirectBackend> make_direct_backend(const std::string& name);

/// The direct backends compiled into this build.
std::vector<Backend> compiled_direct_backends();

}  // namespace tessera::sla
