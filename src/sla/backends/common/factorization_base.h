#pragma once
/// @file factorization_base.h
/// What every third-party factorisation shares: status bookkeeping, right-hand-side
/// layout ([n] or [n, k] in, column-major block to the library) and the singularity
/// check by condition estimate. A backend implements only `solve_in_place`.
///
/// Thread safety: solve() may be called repeatedly but not concurrently on one object
/// (CHOLMOD keeps its workspace in the cholmod_common the factorisation owns).

#include <string>

#include "tessera/sla/backends/direct_backend.h"

namespace tessera::sla::backends::detail {

class FactorizationBase : public Factorization {
 public:
  FactorizationBase(std::string backend, Method method, int64_t n)
      : backend_(std::move(backend)), method_(method), n_(n) {}

  SolveStatus status() const override { return status_; }
  std::string message() const override { return message_; }
  Method method() const override { return method_; }
  std::string backend() const override { return backend_; }
  int64_t size() const { return n_; }

  /// Validates b, solves every column, returns x with b's shape. Throws InvalidInput
  /// when the factorisation is not usable (status() != Converged).
  at::Tensor solve(const at::Tensor& b, bool transpose) const final;

 protected:
  /// X <- A^{-1} X (A^{-T} X when `transpose`); X is column-major n x k (k columns of n).
  virtual void solve_in_place(double* x, int64_t k, bool transpose) const = 0;

  /// Records a failed numerical outcome (Singular / NotPositiveDefinite) and its message.
  void set_failure(SolveStatus status, std::string message) {
    status_ = status;
    message_ = std::move(message);
  }

  /// After a successful factorisation: Singular when the rcond estimate is below
  /// kSingularRcond (see condition.h). Costs a handful of solves.
  void check_condition(const CsrMatrix& a);

 private:
  std::string backend_;
  Method method_;
  int64_t n_;
  SolveStatus status_ = SolveStatus::Converged;
  std::string message_;
};

}  // namespace tessera::sla::backends::detail
