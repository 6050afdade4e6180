// CHOLMOD sparse Cholesky (cholmod_l_*: int64 indices).
#include <cholmod.h>

#include <cstring>
#include <string>

#include "sla/backends/common/csr_checks.h"
#include "sla/backends/common/factorization_base.h"
#include "sla/backends/suitesparse/cholmod_view.h"
#include "sla/backends/suitesparse/suitesparse_backends.h"
#include "tessera/core/error.h"
#include "tessera/core/threads.h"

namespace tessera::sla::backends {
namespace {

static_assert(sizeof(SuiteSparse_long) == sizeof(int64_t), "CHOLMOD's long must be 64-bit");

const char* cholmod_status_text(int status) {
  switch (status) {
    case CHOLMOD_NOT_INSTALLED: return "method not installed";
    case CHOLMOD_OUT_OF_MEMORY: return "out of memory";
    case CHOLMOD_TOO_LARGE: return "integer overflow (problem too large)";
    case CHOLMOD_INVALID: return "invalid input";
    case CHOLMOD_GPU_PROBLEM: return "GPU error";
    default: return "unknown error";
  }
}

// Owns a started cholmod_common (finished on destruction). Heap-allocated and never moved.
struct CholmodCommon {
  cholmod_common c;
  CholmodCommon() {
    cholmod_l_start(&c);
    c.print = 0;  // tessera reports outcomes itself; no warnings on stdout
    c.error_handler = nullptr;
  }
  ~CholmodCommon() { cholmod_l_finish(&c); }
  CholmodCommon(const CholmodCommon&) = delete;
  CholmodCommon& operator=(const CholmodCommon&) = delete;
  // Throws when CHOLMOD reported a fatal error (negative status).
  void check(const char* call) const {
    TESSERA_CHECK(c.status >= CHOLMOD_OK, Unsupported, "cholmod: ", call, " failed: ",
                  cholmod_status_text(c.status), " (status ", c.status, ")");
  }
};

// Frees a factor with the common that allocated it.
struct FactorDeleter {
  CholmodCommon* common;
  void operator()(cholmod_factor* factor) const { cholmod_l_free_factor(&factor, &common->c); }
};

class CholmodFactorization final : public detail::FactorizationBase {
 public:
  explicit CholmodFactorization(const CsrMatrix& a)
      : FactorizationBase("cholmod", Method::Cholesky, a.rows),
        common_(std::make_unique<CholmodCommon>()),
        factor_(nullptr, FactorDeleter{common_.get()}) {
    cholmod_sparse m = detail::cholmod_view(a);
    core::ScopedBlasThreads blas(1);  // supernodal BLAS threads fight over the cores
    factor_.reset(cholmod_l_analyze(&m, &common_->c));  // fill-reducing ordering, symbolic L
    common_->check("cholmod_l_analyze");
    TESSERA_CHECK(factor_ != nullptr, Unsupported, "cholmod: cholmod_l_analyze returned no factor");
    cholmod_l_factorize(&m, factor_.get(), &common_->c);  // L L^T = P A P^T
    common_->check("cholmod_l_factorize");
    const int64_t failed = first_nonpositive_pivot();
    if (failed < static_cast<int64_t>(factor_->n)) {
      set_failure(SolveStatus::NotPositiveDefinite,
                  "cholmod: the matrix is not positive definite (leading minor of order " +
                      std::to_string(failed + 1) + " of " + std::to_string(factor_->n) +
                      " of the permuted matrix failed)");
      return;
    }
    check_condition(a);
  }

 private:
  // Index of the first failed pivot, n when all are positive. Supernodal factors are LL'
  // and CHOLMOD stops at a non-positive pivot (L->minor). Simplicial factors are LDL' by
  // CHOLMOD's default, which only stops at an exactly zero d_j: the sign of D is
  // checked here (d_j is the first entry of column j).
  int64_t first_nonpositive_pivot() const {
    const int64_t n = static_cast<int64_t>(factor_->n);
    if (common_->c.status == CHOLMOD_NOT_POSDEF || static_cast<int64_t>(factor_->minor) < n) {
      return static_cast<int64_t>(factor_->minor);
    }
    if (factor_->is_super || factor_->is_ll) return n;
    const auto* lp = static_cast<const SuiteSparse_long*>(factor_->p);
    const auto* lx = static_cast<const double*>(factor_->x);
    for (int64_t j = 0; j < n; ++j) {
      if (!(lx[lp[j]] > 0.0)) return j;  // d_j <= 0
    }
    return n;
  }

 protected:
  // A = A^T, so the transposed solve is the plain one.
  void solve_in_place(double* x, int64_t k, bool /*transpose*/) const override {
    cholmod_dense rhs;
    std::memset(&rhs, 0, sizeof(rhs));
    rhs.nrow = static_cast<size_t>(size());
    rhs.ncol = static_cast<size_t>(k);
    rhs.nzmax = rhs.nrow * rhs.ncol;
    rhs.d = rhs.nrow;
    rhs.x = x;
    rhs.xtype = CHOLMOD_REAL;
    rhs.dtype = CHOLMOD_DOUBLE;
    core::ScopedBlasThreads blas(1);
    cholmod_dense* solution = cholmod_l_solve(CHOLMOD_A, factor_.get(), &rhs, &common_->c);  // x = A^{-1} b
    common_->check("cholmod_l_solve");
    TESSERA_CHECK(solution != nullptr, Unsupported, "cholmod: cholmod_l_solve returned nothing");
    std::memcpy(x, solution->x, sizeof(double) * rhs.nzmax);
    cholmod_l_free_dense(&solution, &common_->c);
  }

 private:
  std::unique_ptr<CholmodCommon> common_;  // declared first: finished after factor_ is freed
  std::unique_ptr<cholmod_factor, FactorDeleter> factor_;
};

class CholmodBackend final : public DirectBackend {
 public:
  std::string name() const override { return "cholmod"; }
  bool supports(Method method) const override { return method == Method::Cholesky; }
  std::unique_ptr<Factorization> factorize(const CsrMatrix& a, Method method) const override {
    TESSERA_CHECK(supports(method), Unsupported, "cholmod: method '", to_string(method),
                  "' is not provided; cholmod does cholesky only (use umfpack or superlu for lu)");
    detail::check_csr(a, "cholmod");
    detail::check_symmetric(a, "cholmod");
    return std::make_unique<CholmodFactorization>(a);
  }
};

}  // namespace

std::unique_ptr<DirectBackend> make_cholmod_backend() { return std::make_unique<CholmodBackend>(); }

}  // namespace tessera::sla::backends
