// SuperLU sparse LU (dgstrf + dgstrs).
#include "sla/backends/superlu/superlu_backend.h"

#include <slu_ddefs.h>

#include <limits>
#include <string>
#include <vector>

#include "sla/backends/common/csr_checks.h"
#include "sla/backends/common/factorization_base.h"
#include "tessera/core/error.h"
#include "tessera/core/threads.h"

namespace tessera::sla::backends {
namespace {

// SuperLU statistics, initialised and freed in scope.
struct StatGuard {
  SuperLUStat_t stat;
  StatGuard() { StatInit(&stat); }
  ~StatGuard() { StatFree(&stat); }
  StatGuard(const StatGuard&) = delete;
  StatGuard& operator=(const StatGuard&) = delete;
};

// The L and U factors dgstrf allocated, freed on destruction.
struct Factors {
  SuperMatrix l{};
  SuperMatrix u{};
  bool owned = false;
  Factors() = default;
  ~Factors() {
    if (!owned) return;
    Destroy_SuperNode_Matrix(&l);
    Destroy_CompCol_Matrix(&u);
  }
  Factors(const Factors&) = delete;
  Factors& operator=(const Factors&) = delete;
};

// LU of M = A^T: the CSR arrays of A read as compressed columns (SuperLU needs int32
// copies of the index arrays; the values are read in place). Pr M Pc = L U. A x = b is
// M^T x = b (dgstrs TRANS), the transposed solve A^T x = b is M x = b (NOTRANS).
class SuperluFactorization final : public detail::FactorizationBase {
 public:
  explicit SuperluFactorization(const CsrMatrix& a) : FactorizationBase("superlu", Method::LU, a.rows) {
    const int n = static_cast<int>(a.rows);
    const int nnz = static_cast<int>(a.values.numel());
    std::vector<int> colptr(a.row_ptr.data_ptr<int64_t>(), a.row_ptr.data_ptr<int64_t>() + n + 1);
    std::vector<int> rowind(a.col_idx.data_ptr<int64_t>(), a.col_idx.data_ptr<int64_t>() + nnz);
    SuperMatrix m{};
    dCreate_CompCol_Matrix(&m, n, n, nnz, a.values.data_ptr<double>(), rowind.data(), colptr.data(),
                           SLU_NC, SLU_D, SLU_GE);  // only the Store header is allocated
    superlu_options_t options;
    set_default_options(&options);  // COLAMD, partial pivoting (DiagPivotThresh = 1)
    options.PrintStat = NO;
    perm_c_.resize(static_cast<size_t>(n));
    perm_r_.resize(static_cast<size_t>(n));
    std::vector<int> etree(static_cast<size_t>(n));
    get_perm_c(options.ColPerm, &m, perm_c_.data());  // fill-reducing column order Pc
    SuperMatrix permuted{};
    sp_preorder(&options, &m, perm_c_.data(), etree.data(), &permuted);  // M Pc and its etree
    StatGuard stat;
    GlobalLU_t glu{};
    core::ScopedBlasThreads blas(1);  // SuperLU calls the BLAS for supernode updates
    int info = 0;
    dgstrf(&options, &permuted, sp_ienv(2), sp_ienv(1), etree.data(), nullptr, 0, perm_c_.data(),
           perm_r_.data(), &factors_.l, &factors_.u, &glu, &stat.stat, &info);  // Pr M Pc = L U
    Destroy_CompCol_Permuted(&permuted);
    Destroy_SuperMatrix_Store(&m);
    TESSERA_CHECK(info <= n, Unsupported, "superlu: dgstrf ran out of memory after ", info - n,
                  " bytes");
    factors_.owned = true;
    if (info > 0) {
      set_failure(SolveStatus::Singular, "superlu: the matrix is singular (U(" +
                                             std::to_string(info) + ", " + std::to_string(info) +
                                             ") is exactly zero)");
      return;
    }
    check_condition(a);
  }

 protected:
  void solve_in_place(double* x, int64_t k, bool transpose) const override {
    const int n = static_cast<int>(size());
    SuperMatrix b{};
    dCreate_Dense_Matrix(&b, n, static_cast<int>(k), x, n, SLU_DN, SLU_D, SLU_GE);
    StatGuard stat;
    int info = 0;
    // A x = b  <=>  M^T x = b (TRANS);  A^T x = b  <=>  M x = b (NOTRANS)
    dgstrs(transpose ? NOTRANS : TRANS, const_cast<SuperMatrix*>(&factors_.l),
           const_cast<SuperMatrix*>(&factors_.u), const_cast<int*>(perm_c_.data()),
           const_cast<int*>(perm_r_.data()), &b, &stat.stat, &info);
    Destroy_SuperMatrix_Store(&b);
    TESSERA_CHECK(info == 0, InvalidInput, "superlu: dgstrs rejected argument ", -info);
  }

 private:
  Factors factors_;
  std::vector<int> perm_c_, perm_r_;
};

class SuperluBackend final : public DirectBackend {
 public:
  std::string name() const override { return "superlu"; }
  bool supports(Method method) const override { return method == Method::LU; }
  std::unique_ptr<Factorization> factorize(const CsrMatrix& a, Method method) const override {
    TESSERA_CHECK(supports(method), Unsupported, "superlu: method '", to_string(method),
                  "' is not provided; superlu does lu only");
    detail::check_csr(a, "superlu");
    constexpr int64_t kMax = std::numeric_limits<int>::max();
    TESSERA_CHECK(a.rows < kMax && a.values.numel() < kMax, Unsupported,
                  "superlu: uses int32 indices; n = ", a.rows, " and nnz = ", a.values.numel(),
                  " must stay below 2^31 (use umfpack)");
    return std::make_unique<SuperluFactorization>(a);
  }
};

}  // namespace

std::unique_ptr<DirectBackend> make_superlu_backend() { return std::make_unique<SuperluBackend>(); }

}  // namespace tessera::sla::backends
