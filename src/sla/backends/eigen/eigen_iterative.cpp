// Eigen's Krylov solvers (ConjugateGradient, BiCGSTAB) as the iterative backend "eigen".
#include <ATen/ATen.h>

#include <Eigen/IterativeLinearSolvers>

#include <algorithm>
#include <cmath>
#include <utility>

#include "sla/backends/common/csr_checks.h"
#include "sla/backends/eigen/eigen_backends.h"
#include "sla/backends/eigen/eigen_csr.h"
#include "tessera/core/error.h"

namespace tessera::sla::backends {
namespace {

using detail::EigenColMajor;
using detail::EigenRowMajor;

// Worst of two statuses (Converged < NotConverged < Breakdown), to merge columns.
SolveStatus worse(SolveStatus a, SolveStatus b) {
  auto rank = [](SolveStatus s) {
    return s == SolveStatus::Converged ? 0 : s == SolveStatus::NotConverged ? 1 : 2;
  };
  return rank(a) >= rank(b) ? a : b;
}

// Solves the k columns of B (column-major n x k) one after another with `Solver` on
// `matrix` (A, or A^T for the transposed solve). Iterations: the maximum over columns;
// residual: the maximum true relative residual ||b - A x|| / ||b||.
template <class Solver, class MatrixView>
void solve_columns(const MatrixView& matrix, const Eigen::MatrixXd& rhs, const SolveOptions& options,
                   int64_t maxiter, Eigen::MatrixXd& x, SolveInfo& info) {
  Solver solver;
  solver.setMaxIterations(maxiter);
  solver.compute(matrix);
  x.resize(rhs.rows(), rhs.cols());
  for (Eigen::Index j = 0; j < rhs.cols(); ++j) {
    const double bnorm = rhs.col(j).norm();
    if (bnorm == 0.0) {  // b = 0  =>  x = 0 exactly
      x.col(j).setZero();
      continue;
    }
    // ||r|| <= max(rtol ||b||, atol)  <=>  ||r|| / ||b|| <= max(rtol, atol / ||b||)
    solver.setTolerance(std::max(options.rtol, options.atol / bnorm));
    x.col(j) = solver.solve(rhs.col(j));
    info.iterations = std::max<int64_t>(info.iterations, solver.iterations());
    SolveStatus status = solver.info() == Eigen::Success        ? SolveStatus::Converged
                         : solver.info() == Eigen::NoConvergence ? SolveStatus::NotConverged
                                                                 : SolveStatus::Breakdown;
    if (!x.col(j).allFinite()) status = SolveStatus::Breakdown;
    const double residual = (rhs.col(j) - matrix * x.col(j)).norm() / bnorm;  // ||b - A x|| / ||b||
    info.residual = std::isfinite(residual) ? std::max(info.residual, residual) : residual;
    info.status = worse(info.status, status);
  }
}

template <template <class, class> class Krylov, class Matrix, class MatrixView>
void dispatch_preconditioner(const MatrixView& matrix, const Eigen::MatrixXd& rhs,
                             const SolveOptions& options, int64_t maxiter, Eigen::MatrixXd& x,
                             SolveInfo& info) {
  if (options.preconditioner == Preconditioner::Jacobi) {
    solve_columns<Krylov<Matrix, Eigen::DiagonalPreconditioner<double>>>(matrix, rhs, options, maxiter, x, info);
  } else {
    solve_columns<Krylov<Matrix, Eigen::IdentityPreconditioner>>(matrix, rhs, options, maxiter, x, info);
  }
}

// Eigen's CG with both triangles used (the full matrix product), so a converged result
// solves A x = b for the matrix actually given.
template <class Matrix, class Preconditioner>
using FullCG = Eigen::ConjugateGradient<Matrix, Eigen::Lower | Eigen::Upper, Preconditioner>;

template <class Matrix, class Preconditioner>
using BiCGSTAB = Eigen::BiCGSTAB<Matrix, Preconditioner>;

template <class Matrix, class MatrixView>
void dispatch_method(const MatrixView& matrix, const Eigen::MatrixXd& rhs, const SolveOptions& options,
                     int64_t maxiter, Eigen::MatrixXd& x, SolveInfo& info) {
  if (options.method == Method::CG) {
    dispatch_preconditioner<FullCG, Matrix>(matrix, rhs, options, maxiter, x, info);
  } else {
    dispatch_preconditioner<BiCGSTAB, Matrix>(matrix, rhs, options, maxiter, x, info);
  }
}

bool provides(Method method) { return method == Method::CG || method == Method::BiCGStab; }

void check_options(const SolveOptions& options) {
  TESSERA_CHECK(options.method == Method::Auto || provides(options.method), Unsupported,
                "eigen: iterative method '", to_string(options.method), "' is not provided; use cg or bicgstab");
  TESSERA_CHECK(options.preconditioner == Preconditioner::None || options.preconditioner == Preconditioner::Jacobi,
                Unsupported, "eigen: preconditioner '", to_string(options.preconditioner),
                "' is not provided (none or jacobi; the others are the native backend's)");
  TESSERA_CHECK(options.rtol >= 0.0 && options.atol >= 0.0 && (options.rtol > 0.0 || options.atol > 0.0),
                InvalidInput, "eigen: need rtol >= 0, atol >= 0 and one of them > 0, got rtol = ",
                options.rtol, ", atol = ", options.atol);
  TESSERA_CHECK(options.maxiter >= 0, InvalidInput, "eigen: maxiter must be >= 0, got ",
                options.maxiter);
}

class EigenIterativeSolver final : public IterativeSolver {
 public:
  EigenIterativeSolver(CsrMatrix a, const SolveOptions& options) : a_(std::move(a)), options_(options) {}

  IterativeResult solve(const at::Tensor& b, bool transpose, Method method) const override {
    TESSERA_CHECK(provides(method), Unsupported, "eigen: iterative method '", to_string(method),
                  "' is not provided; use cg or bicgstab");
    SolveOptions options = options_;
    options.method = method;
    at::Tensor columns = detail::rhs_to_columns(b, a_.rows, "eigen");  // [k, n]
    const Eigen::Map<const Eigen::MatrixXd> rhs(columns.data_ptr<double>(), a_.rows, columns.size(0));
    const int64_t maxiter = options.maxiter > 0 ? options.maxiter : std::min<int64_t>(10 * a_.rows, 100000);
    IterativeResult result;
    result.info.backend = to_string(Backend::Eigen);
    result.info.method = method;
    Eigen::MatrixXd x;
    if (transpose) {
      dispatch_method<EigenColMajor>(detail::eigen_transposed_view(a_), rhs, options, maxiter, x, result.info);
    } else {
      dispatch_method<EigenRowMajor>(detail::eigen_view(a_), rhs, options, maxiter, x, result.info);
    }
    if (result.info.status != SolveStatus::Converged) {
      result.info.message = std::string("eigen: ") + to_string(method) + " " + to_string(result.info.status) +
                            " after " + std::to_string(result.info.iterations) + " iterations (maxiter " +
                            std::to_string(maxiter) + "), relative residual " + std::to_string(result.info.residual);
    }
    Eigen::Map<Eigen::MatrixXd>(columns.data_ptr<double>(), a_.rows, columns.size(0)) = x;
    result.x = detail::columns_to_rhs(columns, b);
    return result;
  }

 private:
  CsrMatrix a_;
  SolveOptions options_;
};

class EigenIterativeBackend final : public IterativeBackend {
 public:
  Backend id() const override { return Backend::Eigen; }
  bool supports(Method method) const override { return provides(method); }
  bool supports(Preconditioner p) const override {
    return p == Preconditioner::None || p == Preconditioner::Jacobi;
  }

  std::unique_ptr<IterativeSolver> prepare(const SparseTensor& a, int64_t batch,
                                           const SolveOptions& options) const override {
    check_options(options);
    CsrMatrix csr = a.to_csr_matrix(batch);
    detail::check_csr(csr, "eigen");
    return std::make_unique<EigenIterativeSolver>(std::move(csr), options);
  }
};

}  // namespace

std::unique_ptr<IterativeBackend> make_eigen_iterative_backend() {
  return std::make_unique<EigenIterativeBackend>();
}

}  // namespace tessera::sla::backends
