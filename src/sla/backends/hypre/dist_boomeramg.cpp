// BoomerAMG (hypre) on a DSparseTensor's rows, behind a LinearOperator. Compiled only when
// hypre is found.
#if TESSERA_WITH_HYPRE

#include "sla/backends/hypre/dist_boomeramg.h"

#include <HYPRE.h>
#include <HYPRE_parcsr_ls.h>
#include <_hypre_parcsr_mv.h>
#include <mpi.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "dist/mpi_communicator.h"
#include "sla/backends/hypre/hypre_support.h"
#include "sla/dist/autograd/halo_exchange.h"
#include "tessera/core/error.h"

namespace tessera::sla::detail {
namespace {

constexpr at::ScalarType kBigInt = sizeof(HYPRE_BigInt) == 8 ? at::kLong : at::kInt;
constexpr at::ScalarType kInt = sizeof(HYPRE_Int) == 8 ? at::kLong : at::kInt;

/// The hypre objects of one set-up; destroyed with the last LinearOperator holding them.
struct DistBoomerAmg {
  MPI_Comm comm = MPI_COMM_NULL;
  HYPRE_IJMatrix matrix = nullptr;
  hypre_ParCSRMatrix* transposed = nullptr;  // A^T, when the set-up is for the adjoint
  HYPRE_IJVector rhs = nullptr, sol = nullptr;
  HYPRE_Solver solver = nullptr;
  int64_t owned = 0;

  ~DistBoomerAmg() {
    if (dist::mpi_finalized()) return;  // an operator outliving MPI: the process is ending anyway
    if (solver) HYPRE_BoomerAMGDestroy(solver);
    if (rhs) HYPRE_IJVectorDestroy(rhs);
    if (sol) HYPRE_IJVectorDestroy(sol);
    if (transposed) hypre_ParCSRMatrixDestroy(transposed);
    if (matrix) HYPRE_IJMatrixDestroy(matrix);
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

HYPRE_IJVector make_vector(MPI_Comm comm, int64_t first, int64_t owned) {
  HYPRE_IJVector v;
  check_hypre(HYPRE_IJVectorCreate(comm, first, first + owned - 1, &v), "IJVectorCreate");
  HYPRE_IJVectorSetObjectType(v, HYPRE_PARCSR);
  check_hypre(HYPRE_IJVectorInitialize(v), "IJVectorInitialize");
  check_hypre(HYPRE_IJVectorAssemble(v), "IJVectorAssemble");
  return v;
}

/// Rank r's rows are hypre ids first_r .. first_r + owned_r - 1 (first_r = sum_{q<r} owned_q).
int64_t first_hypre_id(const DSparseTensor& a) {
  const std::vector<int64_t> counts = a.partition().counts();
  int64_t first = 0;
  for (int q = 0; q < a.comm()->rank(); ++q) first += counts[q];
  return first;
}

/// Fills the IJ matrix with this rank's rows: hypre row id, hypre column id, value of every
/// stored entry, row by row, with the diagonal-block / off-diagonal-block sizes of each row.
void fill_local_rows(HYPRE_IJMatrix m, const DSparseTensor& a, int64_t first) {
  const int64_t owned = a.owned_rows();
  const int rank = a.comm()->rank();
  at::Tensor owned_ids = at::arange(first, first + owned, at::kLong);
  // hypre ids of the halo columns: their owners' ids, by one halo exchange
  at::Tensor ids = at::cat({owned_ids, halo_forward_raw(*a.comm(), a.plan(), owned_ids)});
  at::Tensor order = std::get<1>(at::sort(a.local_rows_index(), /*stable=*/true, 0, false));
  at::Tensor local_row = a.local_rows_index().index_select(0, order);
  at::Tensor local_col = a.local_cols_index().index_select(0, order);
  at::Tensor values = a.values().detach().index_select(0, order).to(at::kDouble).contiguous();
  TESSERA_CHECK(at::isfinite(values).all().item<bool>(), InvalidInput, "BoomerAMG: rank ", rank,
                " holds a non-finite value in its rows of A");
  at::Tensor per_row = at::bincount(local_row, {}, owned);
  at::Tensor diag_per_row = at::bincount(local_row.masked_select(local_col < owned), {}, owned);
  at::Tensor diag_sizes = diag_per_row.to(kInt).contiguous();
  at::Tensor offd_sizes = (per_row - diag_per_row).to(kInt).contiguous();
  at::Tensor row_sizes = per_row.to(kInt).contiguous();
  check_hypre(HYPRE_IJMatrixSetRowSizes(m, row_sizes.data_ptr<HYPRE_Int>()), "IJMatrixSetRowSizes");
  check_hypre(HYPRE_IJMatrixInitialize(m), "IJMatrixInitialize");
  if (owned > 0) {
    at::Tensor ncols = per_row.to(kInt).contiguous();
    at::Tensor rows = owned_ids.to(kBigInt).contiguous();
    at::Tensor cols = ids.index_select(0, local_col).to(kBigInt).contiguous();
    check_hypre(HYPRE_IJMatrixSetValues(m, static_cast<HYPRE_Int>(owned), ncols.data_ptr<HYPRE_Int>(),
                                        rows.data_ptr<HYPRE_BigInt>(), cols.data_ptr<HYPRE_BigInt>(),
                                        values.data_ptr<double>()),
                "IJMatrixSetValues");
  }
  check_hypre(HYPRE_IJMatrixAssemble(m), "IJMatrixAssemble");
}

}  // namespace

LinearOperator make_distributed_boomeramg(const DSparseTensor& a, bool transpose) {
  TESSERA_CHECK(sizeof(HYPRE_BigInt) == 8 || a.rows() < (int64_t{1} << 31), Unsupported,
                "BoomerAMG: this hypre has 32-bit ids and A has ", a.rows(), " rows");
  ensure_hypre_initialised();
  auto h = std::make_shared<DistBoomerAmg>();
  h->owned = a.owned_rows();
  h->comm = dist::duplicate_for_library(*a.comm(), "distributed BoomerAMG");
  const int64_t first = first_hypre_id(a), last = first + h->owned - 1;
  check_hypre(HYPRE_IJMatrixCreate(h->comm, first, last, first, last, &h->matrix), "IJMatrixCreate");
  HYPRE_IJMatrixSetObjectType(h->matrix, HYPRE_PARCSR);
  fill_local_rows(h->matrix, a, first);
  void* object = nullptr;
  HYPRE_IJMatrixGetObject(h->matrix, &object);
  auto* mat = static_cast<hypre_ParCSRMatrix*>(object);
  if (transpose) {
    check_hypre(hypre_ParCSRMatrixTranspose(mat, &h->transposed, 1), "ParCSRMatrixTranspose");   // A^T
    hypre_CSRMatrixReorder(hypre_ParCSRMatrixDiag(h->transposed));   // diagonal first in each row, as smoothers expect
    mat = h->transposed;
  }
  h->rhs = make_vector(h->comm, first, h->owned);
  h->sol = make_vector(h->comm, first, h->owned);
  void *pb = nullptr, *px = nullptr;
  HYPRE_IJVectorGetObject(h->rhs, &pb);
  HYPRE_IJVectorGetObject(h->sol, &px);
  auto* rhs = static_cast<HYPRE_ParVector>(pb);
  auto* sol = static_cast<HYPRE_ParVector>(px);
  check_hypre(HYPRE_BoomerAMGCreate(&h->solver), "BoomerAMGCreate");
  set_vcycle_parameters(h->solver);
  check_hypre(HYPRE_BoomerAMGSetup(h->solver, reinterpret_cast<HYPRE_ParCSRMatrix>(mat), rhs, sol),
              "BoomerAMGSetup");
  return [h, mat, rhs, sol](const at::Tensor& r) {
    at::Tensor rc = r.to(at::kCPU, at::kDouble).contiguous();
    std::copy(rc.data_ptr<double>(), rc.data_ptr<double>() + h->owned, hypre_local_data(h->rhs));   // b = r (owned rows)
    HYPRE_ParVectorSetConstantValues(sol, 0.0);                                                   // x = 0
    HYPRE_BoomerAMGSolve(h->solver, reinterpret_cast<HYPRE_ParCSRMatrix>(mat), rhs, sol);          // x = V-cycle(b), collective
    HYPRE_ClearAllErrors();                                                                       // "not converged" is expected
    at::Tensor z = at::empty({h->owned}, at::kDouble);
    std::copy(hypre_local_data(h->sol), hypre_local_data(h->sol) + h->owned, z.data_ptr<double>());
    return z.to(r.device(), r.scalar_type());
  };
}

}  // namespace tessera::sla::detail
#endif  // TESSERA_WITH_HYPRE
