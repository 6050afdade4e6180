// UMFPACK sparse LU (umfpack_dl_*: int64 indices).
#include <umfpack.h>

#include <cstdio>
#include <string>
#include <vector>

#include "sla/backends/common/csr_checks.h"
#include "sla/backends/common/factorization_base.h"
#include "sla/backends/suitesparse/suitesparse_backends.h"
#include "tessera/core/error.h"
#include "tessera/core/threads.h"

namespace tessera::sla::backends {
namespace {

static_assert(sizeof(SuiteSparse_long) == sizeof(int64_t), "UMFPACK's long must be 64-bit");

const char* umfpack_status_text(SuiteSparse_long status) {
  switch (status) {
    case UMFPACK_ERROR_out_of_memory: return "out of memory";
    case UMFPACK_ERROR_invalid_Numeric_object: return "invalid Numeric object";
    case UMFPACK_ERROR_invalid_Symbolic_object: return "invalid Symbolic object";
    case UMFPACK_ERROR_argument_missing: return "argument missing";
    case UMFPACK_ERROR_n_nonpositive: return "n <= 0";
    case UMFPACK_ERROR_invalid_matrix: return "invalid matrix";
    case UMFPACK_ERROR_invalid_system: return "invalid system";
    case UMFPACK_ERROR_ordering_failed: return "ordering failed";
    case UMFPACK_ERROR_internal_error: return "internal error";
    default: return "unknown error";
  }
}

void check_umfpack(SuiteSparse_long status, const char* call) {
  TESSERA_CHECK(status >= UMFPACK_OK, Unsupported, "umfpack: ", call, " failed: ",
                umfpack_status_text(status), " (status ", status, ")");
}

struct SymbolicDeleter {
  void operator()(void* symbolic) const { umfpack_dl_free_symbolic(&symbolic); }
};
struct NumericDeleter {
  void operator()(void* numeric) const { umfpack_dl_free_numeric(&numeric); }
};

// LU of M = A^T: the CSR arrays of A read column-major (no transpose copy). So A x = b is
// solved as M^T x = b (UMFPACK_At) and the transposed solve A^T x = b as M x = b
// (UMFPACK_A). UMFPACK's iterative refinement reads the matrix again at solve time, so
// the factorisation keeps its own copy of the arrays (a caller, e.g. an optimiser step,
// may change a.values in place while the factorisation is still cached).
class UmfpackFactorization final : public detail::FactorizationBase {
 public:
  explicit UmfpackFactorization(const CsrMatrix& a)
      : FactorizationBase("umfpack", Method::LU, a.rows),
        row_ptr_(a.row_ptr.clone()), col_idx_(a.col_idx.clone()), values_(a.values.clone()) {
    umfpack_dl_defaults(control_);
    double info[UMFPACK_INFO];
    void* symbolic = nullptr;
    void* numeric = nullptr;
    core::ScopedBlasThreads blas(1);  // frontal-matrix BLAS threads fight over the cores
    const SuiteSparse_long n = a.rows;
    SuiteSparse_long status =
        umfpack_dl_symbolic(n, n, ap(), ai(), ax(), &symbolic, control_, info);  // column ordering Q
    std::unique_ptr<void, SymbolicDeleter> symbolic_guard(symbolic);
    check_umfpack(status, "umfpack_dl_symbolic");
    status = umfpack_dl_numeric(ap(), ai(), ax(), symbolic, &numeric, control_, info);  // P M Q = L U
    numeric_.reset(numeric);
    if (status == UMFPACK_WARNING_singular_matrix) {
      char rcond[32];
      std::snprintf(rcond, sizeof(rcond), "%.3g", info[UMFPACK_RCOND]);  // min |u_ii| / max |u_ii|
      set_failure(SolveStatus::Singular,
                  std::string("umfpack: the matrix is singular (a zero pivot; pivot ratio ") + rcond + ")");
      return;
    }
    check_umfpack(status, "umfpack_dl_numeric");
    check_condition(a);
  }

 protected:
  void solve_in_place(double* x, int64_t k, bool transpose) const override {
    const SuiteSparse_long system = transpose ? UMFPACK_A : UMFPACK_At;
    const auto n = static_cast<size_t>(size());
    std::vector<double> b(n);
    double info[UMFPACK_INFO];
    core::ScopedBlasThreads blas(1);
    for (int64_t j = 0; j < k; ++j) {
      double* column = x + static_cast<size_t>(j) * n;
      b.assign(column, column + n);
      // x = A^{-1} b (UMFPACK_At on M = A^T), with UMFPACK's iterative refinement
      const SuiteSparse_long status =
          umfpack_dl_solve(system, ap(), ai(), ax(), column, b.data(), numeric_.get(), control_, info);
      check_umfpack(status, "umfpack_dl_solve");
    }
  }

 private:
  const SuiteSparse_long* ap() const { return reinterpret_cast<const SuiteSparse_long*>(row_ptr_.data_ptr<int64_t>()); }
  const SuiteSparse_long* ai() const { return reinterpret_cast<const SuiteSparse_long*>(col_idx_.data_ptr<int64_t>()); }
  const double* ax() const { return values_.data_ptr<double>(); }

  at::Tensor row_ptr_, col_idx_, values_;
  double control_[UMFPACK_CONTROL];
  std::unique_ptr<void, NumericDeleter> numeric_;
};

class UmfpackBackend final : public DirectBackend {
 public:
  std::string name() const override { return "umfpack"; }
  bool supports(Method method) const override { return method == Method::LU; }
  std::unique_ptr<Factorization> factorize(const CsrMatrix& a, Method method) const override {
    TESSERA_CHECK(supports(method), Unsupported, "umfpack: method '", to_string(method),
                  "' is not provided; umfpack does lu only (use cholmod or eigen for cholesky)");
    detail::check_csr(a, "umfpack");
    return std::make_unique<UmfpackFactorization>(a);
  }
};

}  // namespace

std::unique_ptr<DirectBackend> make_umfpack_backend() { return std::make_unique<UmfpackBackend>(); }

}  // namespace tessera::sla::backends
