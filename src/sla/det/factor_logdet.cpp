// The determinant from CHOLMOD's and UMFPACK's factorisations (no densifying).

#include "sla/det/factor_logdet.h"

#include <ATen/ATen.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "tessera/core/error.h"
#include "tessera/core/threads.h"

#if TESSERA_WITH_CHOLMOD
#include <cholmod.h>

#include "sla/backends/suitesparse/cholmod_view.h"
#endif
#if TESSERA_WITH_UMFPACK
#include <umfpack.h>
#endif

namespace tessera::sla::detail {

#if TESSERA_WITH_UMFPACK
namespace {

LogdetValue singular(LogdetValue v, std::string message) {
  v.status = SolveStatus::Singular;
  v.sign = 0.0;
  v.logabsdet = -std::numeric_limits<double>::infinity();
  v.message = std::move(message);
  return v;
}

}  // namespace
#endif

LogdetValue cholmod_logdet(const CsrMatrix& a) {
#if !TESSERA_WITH_CHOLMOD
  TESSERA_THROW(NotCompiled, "logdet: backend 'cholmod' is not compiled into this build (TESSERA_WITH_CHOLMOD=OFF)");
#else
  LogdetValue v;
  v.backend = "cholmod";
  v.method = Method::Cholesky;
  const int64_t n = a.rows;
  cholmod_common cc;
  cholmod_l_start(&cc);
  cc.print = 0;
  cc.error_handler = nullptr;
  cholmod_sparse m = backends::detail::cholmod_view(a);   // CSR read as CSC is A^T = A; one triangle
  core::ScopedBlasThreads blas(1);
  cholmod_factor* f = cholmod_l_analyze(&m, &cc);
  TESSERA_CHECK(f != nullptr, Unsupported, "logdet: cholmod_l_analyze failed (status ", cc.status, ")");
  cholmod_l_factorize(&m, f, &cc);                        // P A P^T = L L^T
  bool pd = cc.status >= CHOLMOD_OK && cc.status != CHOLMOD_NOT_POSDEF && static_cast<int64_t>(f->minor) >= n;
  if (pd && f->is_super) {
    cholmod_l_change_factor(CHOLMOD_REAL, /*to_ll=*/1, /*to_super=*/0, /*to_packed=*/1, /*to_monotonic=*/1, f, &cc);
  }
  if (pd) {
    const auto* lp = static_cast<const SuiteSparse_long*>(f->p);
    const auto* lx = static_cast<const double*>(f->x);
    double sum = 0.0;
    for (int64_t j = 0; j < n && pd; ++j) {
      const double pivot = lx[lp[j]];                     // L_jj (LL^T) or d_j (LDL^T): first entry of column j
      pd = pivot > 0.0;
      sum += std::log(pivot);
    }
    v.logabsdet = f->is_ll ? 2.0 * sum : sum;             // log det = 2 sum log L_jj  or  sum log d_j
    v.sign = 1.0;
  }
  cholmod_l_free_factor(&f, &cc);
  cholmod_l_finish(&cc);
  if (!pd) {
    v.status = SolveStatus::NotPositiveDefinite;
    v.message = "cholmod: the matrix is not positive definite";
  }
  return v;
#endif
}

LogdetValue umfpack_logdet(const CsrMatrix& a) {
#if !TESSERA_WITH_UMFPACK
  TESSERA_THROW(NotCompiled, "logdet: backend 'umfpack' is not compiled into this build (TESSERA_WITH_UMFPACK=OFF)");
#else
  LogdetValue v;
  v.backend = "umfpack";
  v.method = Method::LU;
  const auto n = static_cast<SuiteSparse_long>(a.rows);
  // CSR of A read as CSC is A^T, and det A^T = det A
  const auto* ap = reinterpret_cast<const SuiteSparse_long*>(a.row_ptr.data_ptr<int64_t>());
  const auto* ai = reinterpret_cast<const SuiteSparse_long*>(a.col_idx.data_ptr<int64_t>());
  const double* ax = a.values.data_ptr<double>();
  double control[UMFPACK_CONTROL], info[UMFPACK_INFO];
  umfpack_dl_defaults(control);
  core::ScopedBlasThreads blas(1);
  void* symbolic = nullptr;
  void* numeric = nullptr;
  SuiteSparse_long status = umfpack_dl_symbolic(n, n, ap, ai, ax, &symbolic, control, info);
  TESSERA_CHECK(status == UMFPACK_OK, Unsupported, "logdet: umfpack_dl_symbolic failed (status ", status, ")");
  status = umfpack_dl_numeric(ap, ai, ax, symbolic, &numeric, control, info);
  umfpack_dl_free_symbolic(&symbolic);
  if (status == UMFPACK_WARNING_singular_matrix) {
    umfpack_dl_free_numeric(&numeric);
    return singular(v, "umfpack: the matrix is singular (a zero pivot)");
  }
  TESSERA_CHECK(status == UMFPACK_OK, Unsupported, "logdet: umfpack_dl_numeric failed (status ", status, ")");
  const double rcond = info[UMFPACK_RCOND];   // min |u_ii| / max |u_ii|: a cheap singularity test
  double mantissa = 0.0, exponent = 0.0;
  status = umfpack_dl_get_determinant(&mantissa, &exponent, numeric, info);   // det = mantissa 10^exponent
  umfpack_dl_free_numeric(&numeric);
  if (status == UMFPACK_WARNING_singular_matrix || mantissa == 0.0) {
    return singular(v, "umfpack: the matrix is singular (determinant 0)");
  }
  if (!(rcond > 1e-15)) {
    return singular(v, "umfpack: the matrix is numerically singular (pivot ratio " + std::to_string(rcond) + ")");
  }
  TESSERA_CHECK(status == UMFPACK_OK, Unsupported, "logdet: umfpack_dl_get_determinant failed (status ", status, ")");
  v.sign = mantissa > 0 ? 1.0 : -1.0;
  v.logabsdet = std::log(std::abs(mantissa)) + exponent * std::log(10.0);   // log|det| = log|m| + e log 10
  return v;
#endif
}

}  // namespace tessera::sla::detail
