// Eigen's direct sparse solvers: SimplicialLLT, SimplicialLDLT and SparseLU.
#include <Eigen/SparseCholesky>
#include <Eigen/SparseLU>

#include "sla/backends/common/csr_checks.h"
#include "sla/backends/common/factorization_base.h"
#include "sla/backends/eigen/eigen_backends.h"
#include "sla/backends/eigen/eigen_csr.h"
#include "tessera/core/error.h"

namespace tessera::sla::backends {
namespace {

using detail::EigenColMajor;
using ColumnsMap = Eigen::Map<Eigen::MatrixXd>;

// Cholesky (LLT) or LDLT of a symmetric A. The solver sees A^T (the CSR arrays read
// column-major) and its upper triangle, i.e. the lower triangle of A. Since A = A^T the
// transposed solve is the plain one.
template <class Solver>
class EigenSymmetricFactorization final : public detail::FactorizationBase {
 public:
  EigenSymmetricFactorization(const CsrMatrix& a, Method method)
      : FactorizationBase("eigen", method, a.rows) {
    solver_.compute(detail::eigen_transposed_view(a));
    if (solver_.info() != Eigen::Success) {
      const bool cholesky = method == Method::Cholesky;
      set_failure(cholesky ? SolveStatus::NotPositiveDefinite : SolveStatus::Singular,
                  cholesky ? "eigen: SimplicialLLT met a non-positive pivot: the matrix is not "
                             "positive definite"
                           : "eigen: SimplicialLDLT met a zero pivot: the matrix is singular");
      return;
    }
    check_condition(a);
  }

 protected:
  void solve_in_place(double* x, int64_t k, bool /*transpose: A^T = A*/) const override {
    ColumnsMap columns(x, size(), k);
    Eigen::MatrixXd result = solver_.solve(columns);  // x = A^{-1} b
    columns = result;
  }

 private:
  Solver solver_;
};

using EigenLLT = Eigen::SimplicialLLT<EigenColMajor, Eigen::Upper, Eigen::AMDOrdering<int64_t>>;
using EigenLDLT = Eigen::SimplicialLDLT<EigenColMajor, Eigen::Upper, Eigen::AMDOrdering<int64_t>>;
using EigenLU = Eigen::SparseLU<EigenColMajor, Eigen::COLAMDOrdering<int64_t>>;

// LU of A: SparseLU factorises M = A^T (the CSR arrays read column-major, no transpose
// copy), so A x = b is solved as M^T x = b through SparseLU's transpose() view, and the
// transposed solve A^T x = b as the plain M x = b.
class EigenLUFactorization final : public detail::FactorizationBase {
 public:
  explicit EigenLUFactorization(const CsrMatrix& a) : FactorizationBase("eigen", Method::LU, a.rows) {
    EigenColMajor m = detail::eigen_transposed_view(a);  // SparseLU keeps its own copy anyway
    solver_.analyzePattern(m);
    solver_.factorize(m);
    if (solver_.info() != Eigen::Success) {
      set_failure(SolveStatus::Singular, "eigen: SparseLU met a zero pivot, the matrix is singular (Eigen: " +
                                             solver_.lastErrorMessage() + ")");
      return;
    }
    check_condition(a);
  }

 protected:
  void solve_in_place(double* x, int64_t k, bool transpose) const override {
    ColumnsMap columns(x, size(), k);
    Eigen::MatrixXd result;
    if (transpose) {
      result = solver_.solve(columns);  // A^T x = b  <=>  M x = b
    } else {
      result = solver_.transpose().solve(columns);  // A x = b  <=>  M^T x = b
    }
    columns = result;
  }

 private:
  mutable EigenLU solver_;  // transpose() is non-const in Eigen 3.4
};

class EigenDirectBackend final : public DirectBackend {
 public:
  std::string name() const override { return "eigen"; }
  bool supports(Method method) const override {
    return method == Method::Cholesky || method == Method::LDLT || method == Method::LU;
  }
  std::unique_ptr<Factorization> factorize(const CsrMatrix& a, Method method) const override {
    TESSERA_CHECK(supports(method), Unsupported, "eigen: direct method '", to_string(method),
                  "' is not provided; use cholesky, ldlt or lu");
    detail::check_csr(a, "eigen");
    if (method == Method::LU) return std::make_unique<EigenLUFactorization>(a);
    detail::check_symmetric(a, "eigen");
    if (method == Method::Cholesky) {
      return std::make_unique<EigenSymmetricFactorization<EigenLLT>>(a, method);
    }
    return std::make_unique<EigenSymmetricFactorization<EigenLDLT>>(a, method);
  }
};

}  // namespace

std::unique_ptr<DirectBackend> make_eigen_direct_backend() {
  return std::make_unique<EigenDirectBackend>();
}

}  // namespace tessera::sla::backends
