// BoomerAMG (hypre) behind a LinearOperator. Compiled only when hypre is found.
#if TESSERA_WITH_HYPRE

#include "sla/backends/hypre/boomeramg.h"
#include "sla/backends/hypre/hypre_support.h"

#include <HYPRE.h>
#include <HYPRE_parcsr_ls.h>
#include <_hypre_parcsr_mv.h>
#include <mpi.h>

#include <ATen/ATen.h>

#include <memory>
#include <vector>

#include "tessera/core/error.h"

namespace tessera::sla::detail {
namespace {

HYPRE_IJVector make_vector(int64_t n) {
  HYPRE_IJVector v;
  check_hypre(HYPRE_IJVectorCreate(MPI_COMM_SELF, 0, n - 1, &v), "IJVectorCreate");
  HYPRE_IJVectorSetObjectType(v, HYPRE_PARCSR);
  HYPRE_IJVectorInitialize(v);
  HYPRE_IJVectorAssemble(v);
  return v;
}

/// The hypre objects of one set-up; destroyed with the last LinearOperator holding them.
struct BoomerAmg {
  HYPRE_IJMatrix matrix = nullptr;
  HYPRE_IJVector rhs = nullptr, sol = nullptr;
  HYPRE_Solver solver = nullptr;
  int64_t n = 0;

  ~BoomerAmg() {
    if (solver) HYPRE_BoomerAMGDestroy(solver);
    if (rhs) HYPRE_IJVectorDestroy(rhs);
    if (sol) HYPRE_IJVectorDestroy(sol);
    if (matrix) HYPRE_IJMatrixDestroy(matrix);
  }
};

template <typename I>
void fill_matrix(HYPRE_IJMatrix m, const CsrData& a) {
  const I* rp = a.row_ptr.data_ptr<I>();
  const I* ci = a.col_idx.data_ptr<I>();
  const double* va = a.values.data_ptr<double>();
  std::vector<HYPRE_Int> sizes(a.rows);
  for (int64_t i = 0; i < a.rows; ++i) sizes[i] = static_cast<HYPRE_Int>(rp[i + 1] - rp[i]);
  HYPRE_IJMatrixSetRowSizes(m, sizes.data());
  check_hypre(HYPRE_IJMatrixInitialize(m), "IJMatrixInitialize");
  std::vector<HYPRE_BigInt> cols;
  for (int64_t i = 0; i < a.rows; ++i) {
    HYPRE_Int count = sizes[i];
    HYPRE_BigInt row = i;
    cols.assign(ci + rp[i], ci + rp[i + 1]);
    check_hypre(HYPRE_IJMatrixSetValues(m, 1, &count, &row, cols.data(), va + rp[i]), "IJMatrixSetValues");
  }
  check_hypre(HYPRE_IJMatrixAssemble(m), "IJMatrixAssemble");
}

}  // namespace

LinearOperator make_boomeramg(const CsrData& a) {
  TESSERA_CHECK(a.rows == a.cols && a.values.is_cpu(), InvalidInput, "BoomerAMG: a square CPU matrix is needed");
  TESSERA_CHECK(a.rows < (int64_t{1} << 31), Unsupported, "BoomerAMG: more than 2^31 rows");
  ensure_hypre_initialised();
  auto h = std::make_shared<BoomerAmg>();
  h->n = a.rows;
  check_hypre(HYPRE_IJMatrixCreate(MPI_COMM_SELF, 0, a.rows - 1, 0, a.cols - 1, &h->matrix), "IJMatrixCreate");
  HYPRE_IJMatrixSetObjectType(h->matrix, HYPRE_PARCSR);
  if (a.row_ptr.scalar_type() == at::kInt) {
    fill_matrix<int32_t>(h->matrix, a);
  } else {
    fill_matrix<int64_t>(h->matrix, a);
  }
  h->rhs = make_vector(a.rows);
  h->sol = make_vector(a.rows);
  void *pa = nullptr, *pb = nullptr, *px = nullptr;
  HYPRE_IJMatrixGetObject(h->matrix, &pa);
  HYPRE_IJVectorGetObject(h->rhs, &pb);
  HYPRE_IJVectorGetObject(h->sol, &px);
  check_hypre(HYPRE_BoomerAMGCreate(&h->solver), "BoomerAMGCreate");
  set_vcycle_parameters(h->solver);
  auto* mat = static_cast<HYPRE_ParCSRMatrix>(pa);
  auto* rhs = static_cast<HYPRE_ParVector>(pb);
  auto* sol = static_cast<HYPRE_ParVector>(px);
  check_hypre(HYPRE_BoomerAMGSetup(h->solver, mat, rhs, sol), "BoomerAMGSetup");
  return [h, mat, rhs, sol](const at::Tensor& r) {
    at::Tensor rc = r.to(at::kCPU, at::kDouble).contiguous();
    std::copy(rc.data_ptr<double>(), rc.data_ptr<double>() + h->n, hypre_local_data(h->rhs));   // b = r
    HYPRE_ParVectorSetConstantValues(sol, 0.0);                                           // x = 0
    HYPRE_BoomerAMGSolve(h->solver, mat, rhs, sol);                                       // x = V-cycle(b)
    HYPRE_ClearAllErrors();                                                               // "not converged" is expected
    at::Tensor z = at::empty({h->n}, at::kDouble);
    std::copy(hypre_local_data(h->sol), hypre_local_data(h->sol) + h->n, z.data_ptr<double>());
    return z.to(r.device(), r.scalar_type());
  };
}

}  // namespace tessera::sla::detail
#endif  // TESSERA_WITH_HYPRE
