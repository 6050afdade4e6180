// MUMPS (distributed assembled input, centralised right-hand side and solution) behind
// DistDirectFactorization. Without MUMPS only the factory is compiled (it throws NotCompiled).

#include "sla/backends/mumps/dist_mumps.h"

#include "tessera/core/error.h"

#if TESSERA_WITH_MUMPS
#include <dmumps_c.h>
#include <mpi.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "dist/mpi_communicator.h"

namespace tessera::sla::detail {
namespace {

constexpr int kHost = 0;  // MUMPS's host: rank 0 of its communicator (PAR = 1: it also works)

std::string describe(int code) {
  switch (code) {
    case -6:
    case -10: return "the matrix is singular";
    case -9:
    case -8:
    case -13: return "out of memory";
    case -16: return "N is out of range";
    default: return "see the MUMPS user guide, section on error diagnostics";
  }
}

class MumpsFactorization final : public DistDirectFactorization {
 public:
  MumpsFactorization(const DSparseTensor& a, const DistFactorOptions& options)
      : options_(options), n_(a.rows()), owned_(a.owned_rows()) {
    comm_ = dist::duplicate_for_library(*a.comm(), "MUMPS");
    try {
      factorize(a);
    } catch (...) {
      release();  // every rank throws alike: the collective release meets on all of them
      throw;
    }
  }

  ~MumpsFactorization() override { release(); }

  at::Tensor solve(const at::Tensor& b, bool transpose) override {
    at::Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
    std::vector<at::Tensor> columns;
    for (int64_t j = 0; j < b2.size(1); ++j) columns.push_back(solve_column(b2.select(1, j), transpose));
    at::Tensor x = at::stack(columns, 1).to(b.scalar_type());
    return b.dim() == 1 ? x.squeeze(1) : x;
  }

 private:
  void factorize(const DSparseTensor& a) {
    MPI_Comm_rank(comm_, &rank_);
    int size = 1;
    MPI_Comm_size(comm_, &size);
    gather_layout(a, size);
    id_.comm_fortran = static_cast<MUMPS_INT>(MPI_Comm_c2f(comm_));
    id_.par = 1;  // the host takes part in the factorisation
    id_.sym = 0;  // general LU
    id_.job = -1;
    dmumps_c(&id_);
    initialised_ = true;
    check("initialisation");
    id_.icntl[0] = -1;  // ICNTL(1..4): no messages on any stream
    id_.icntl[1] = -1;
    id_.icntl[2] = -1;
    id_.icntl[3] = 0;
    id_.icntl[17] = 3;  // ICNTL(18) = 3: distributed assembled input, structure and values
    id_.icntl[19] = 0;  // ICNTL(20) = 0: dense right-hand side on the host
    id_.icntl[20] = 0;  // ICNTL(21) = 0: solution centralised on the host
    id_.icntl[23] = 1;  // ICNTL(24) = 1: detect null pivots (a numerically singular A)
    if (options_.determinant) id_.icntl[32] = 1;  // ICNTL(33) = 1: det A with the factors
    set_local_entries(a);
    id_.n = static_cast<MUMPS_INT>(n_);
    id_.nnz_loc = static_cast<MUMPS_INT8>(values_.numel());
    id_.irn_loc = irn_.data();
    id_.jcn_loc = jcn_.data();
    id_.a_loc = values_.data_ptr<double>();
    id_.job = 4;  // analysis (ordering, symbolic) then numerical LU
    dmumps_c(&id_);
    // INFOG(1) = -8 / -9: the workspace estimated by the analysis was too small (delayed pivots
    // of a (near-)singular A, or a pivot order that depends on MUMPS's run-time scheduling):
    // the factorisation again with ICNTL(14), the percentage added, doubled (INFOG is global,
    // so every rank retries alike)
    for (int retry = 0; retry < 4 && (id_.infog[0] == -8 || id_.infog[0] == -9); ++retry) {
      id_.icntl[13] = std::max<MUMPS_INT>(2 * id_.icntl[13], 40);
      id_.job = 2;
      dmumps_c(&id_);
    }
    check("factorisation");
    null_pivots_ = static_cast<long>(id_.infog[27]);  // INFOG(28), global like INFOG(1)
    const long null_pivots = null_pivots_;
    TESSERA_CHECK(null_pivots == 0 || options_.allow_singular, InvalidInput, "MUMPS factorisation failed on ", n_, " rows: INFOG(28) = ",
                  null_pivots, " null pivots (the matrix is singular)");
  }

 public:
  std::pair<double, double> slogdet() const override {
    TESSERA_CHECK(options_.determinant, InvalidInput, "MUMPS: the determinant was not asked for at factorisation");
    if (null_pivots_ > 0) return {0.0, -std::numeric_limits<double>::infinity()};
    // det A = RINFOG(12) 2^INFOG(34), the same on every rank
    const double mantissa = static_cast<double>(id_.rinfog[11]);
    const double exponent = static_cast<double>(id_.infog[33]);
    if (mantissa == 0.0) return {0.0, -std::numeric_limits<double>::infinity()};
    return {mantissa > 0 ? 1.0 : -1.0, std::log(std::abs(mantissa)) + exponent * std::log(2.0)};
  }

  int64_t null_pivots() const override { return null_pivots_; }

  // The pairs of every rank gathered on the host and grouped by column j (MUMPS wants the
  // wanted rows of column j of A^{-1} together: a sparse right-hand side, ICNTL(30) = 1);
  // the values go back to the ranks that asked, in their order.
  at::Tensor inverse_entries(const at::Tensor& rows, const at::Tensor& cols) override {
    int size = 1;
    MPI_Comm_size(comm_, &size);
    at::Tensor r = rows.to(at::kInt).contiguous(), c = cols.to(at::kInt).contiguous();
    int count = static_cast<int>(r.numel());
    std::vector<int> counts(size, 0), displs(size, 0);
    MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, kHost, comm_);
    for (int q = 1; q < size; ++q) displs[q] = displs[q - 1] + counts[q - 1];
    const int total = rank_ == kHost ? displs[size - 1] + counts[size - 1] : 0;
    std::vector<int> all_rows(total), all_cols(total);
    MPI_Gatherv(r.data_ptr<int>(), count, MPI_INT, all_rows.data(), counts.data(), displs.data(), MPI_INT, kHost, comm_);
    MPI_Gatherv(c.data_ptr<int>(), count, MPI_INT, all_cols.data(), counts.data(), displs.data(), MPI_INT, kHost, comm_);
    std::vector<double> all_values(total);
    std::vector<MUMPS_INT> irhs_ptr, irhs_sparse;
    std::vector<double> rhs_sparse;
    std::vector<int> order(total);
    if (rank_ == kHost) {
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return all_cols[x] < all_cols[y]; });
      irhs_ptr.assign(n_ + 1, 0);
      for (int e = 0; e < total; ++e) ++irhs_ptr[all_cols[e] + 1];
      irhs_ptr[0] = 1;  // 1-based
      for (int64_t j = 0; j < n_; ++j) irhs_ptr[j + 1] += irhs_ptr[j];
      irhs_sparse.resize(std::max(total, 1));
      for (int e = 0; e < total; ++e) irhs_sparse[e] = all_rows[order[e]] + 1;
      rhs_sparse.assign(std::max(total, 1), 0.0);
      id_.nz_rhs = static_cast<MUMPS_INT>(total);
      id_.nrhs = static_cast<MUMPS_INT>(n_);
      id_.lrhs = static_cast<MUMPS_INT>(n_);
      id_.irhs_ptr = irhs_ptr.data();
      id_.irhs_sparse = irhs_sparse.data();
      id_.rhs_sparse = rhs_sparse.data();
    }
    id_.icntl[29] = 1;  // ICNTL(30) = 1: entries of A^{-1}
    id_.job = 3;
    dmumps_c(&id_);
    id_.icntl[29] = 0;
    id_.nrhs = 1;
    id_.nz_rhs = 0;
    id_.irhs_ptr = nullptr;
    id_.irhs_sparse = nullptr;
    id_.rhs_sparse = nullptr;
    check("selected inversion");
    if (rank_ == kHost) {
      for (int e = 0; e < total; ++e) all_values[order[e]] = rhs_sparse[e];
    }
    at::Tensor out = at::empty({count}, at::kDouble);
    MPI_Scatterv(all_values.data(), counts.data(), displs.data(), MPI_DOUBLE, out.data_ptr<double>(), count,
                 MPI_DOUBLE, kHost, comm_);
    return out;
  }

 private:
  void release() {
    if (dist::mpi_finalized()) return;  // outliving MPI: the process is ending anyway
    if (initialised_) {
      id_.job = -2;  // frees MUMPS's factors (collective)
      dmumps_c(&id_);
      initialised_ = false;
    }
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }

  // The owned rows' global ids on every rank, gathered on the host (for the right-hand side
  // and the solution, which MUMPS keeps there in global order).
  void gather_layout(const DSparseTensor& a, int size) {
    owned_global_ = a.plan().local_to_global.narrow(0, 0, owned_).to(at::kInt).contiguous();
    int count = static_cast<int>(owned_);
    counts_.assign(size, 0);
    MPI_Gather(&count, 1, MPI_INT, counts_.data(), 1, MPI_INT, kHost, comm_);
    displs_.assign(size, 0);
    for (int r = 1; r < size; ++r) displs_[r] = displs_[r - 1] + counts_[r - 1];
    if (rank_ == kHost) all_global_.resize(n_);
    MPI_Gatherv(owned_global_.data_ptr<int>(), count, MPI_INT, all_global_.data(), counts_.data(), displs_.data(),
                MPI_INT, kHost, comm_);
  }

  // (i, j, a_ij) of this rank's stored entries, i and j global and 1-based.
  void set_local_entries(const DSparseTensor& a) {
    TESSERA_CHECK(n_ < (int64_t{1} << 31), Unsupported, "MUMPS: A has ", n_, " rows, beyond 32-bit ids");
    const at::Tensor& global = a.plan().local_to_global;
    at::Tensor rows = global.index_select(0, a.local_rows_index()) + 1;
    at::Tensor cols = global.index_select(0, a.local_cols_index()) + 1;
    irn_.resize(rows.numel());
    jcn_.resize(cols.numel());
    at::Tensor r32 = rows.to(at::kInt).contiguous(), c32 = cols.to(at::kInt).contiguous();
    std::copy(r32.data_ptr<int>(), r32.data_ptr<int>() + r32.numel(), irn_.begin());
    std::copy(c32.data_ptr<int>(), c32.data_ptr<int>() + c32.numel(), jcn_.begin());
    values_ = a.values().detach().to(at::kCPU, at::kDouble).contiguous();
    // this rank alone stops (the others wait in MUMPS's analysis): a guarded program ends the job
    TESSERA_CHECK(at::isfinite(values_).all().item<bool>(), InvalidInput, "MUMPS: rank ", rank_,
                  " holds a non-finite value in its rows of A");
  }

  // b gathered on the host in global order, solved there by MUMPS with every rank's
  // factors, x scattered back to the owners' rows.
  at::Tensor solve_column(const at::Tensor& b, bool transpose) {
    at::Tensor mine = b.to(at::kCPU, at::kDouble).contiguous();
    std::vector<double> packed(rank_ == kHost ? n_ : 0), dense(rank_ == kHost ? n_ : 0);
    MPI_Gatherv(mine.data_ptr<double>(), static_cast<int>(owned_), MPI_DOUBLE, packed.data(), counts_.data(),
                displs_.data(), MPI_DOUBLE, kHost, comm_);
    if (rank_ == kHost) {
      for (int64_t k = 0; k < n_; ++k) dense[all_global_[k]] = packed[k];  // b in global order
      id_.rhs = dense.data();
      id_.nrhs = 1;
      id_.lrhs = static_cast<MUMPS_INT>(n_);
    }
    id_.icntl[8] = transpose ? 2 : 1;  // ICNTL(9): 1 solves A x = b, otherwise A^T x = b
    id_.job = 3;
    dmumps_c(&id_);
    check(transpose ? "transposed solve" : "solve");
    if (rank_ == kHost) {
      for (int64_t k = 0; k < n_; ++k) packed[k] = dense[all_global_[k]];  // x by owner
    }
    at::Tensor x = at::empty({owned_}, at::kDouble);
    MPI_Scatterv(packed.data(), counts_.data(), displs_.data(), MPI_DOUBLE, x.data_ptr<double>(),
                 static_cast<int>(owned_), MPI_DOUBLE, kHost, comm_);
    return x.to(b.device());
  }

  // INFOG(1) < 0 is an error; MUMPS gives every rank the same INFOG, so all throw together.
  void check(const char* phase) const {
    const int code = static_cast<int>(id_.infog[0]);
    TESSERA_CHECK(code >= 0, InvalidInput, "MUMPS ", phase, " failed on ", n_, " rows: INFOG(1) = ", code,
                  ", INFOG(2) = ", static_cast<long>(id_.infog[1]), " (", describe(code), ")");
  }

  DistFactorOptions options_;
  long null_pivots_ = 0;
  DMUMPS_STRUC_C id_{};
  bool initialised_ = false;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int64_t n_ = 0, owned_ = 0;
  at::Tensor owned_global_, values_;
  std::vector<int> counts_, displs_, all_global_;
  std::vector<MUMPS_INT> irn_, jcn_;
};

}  // namespace

std::shared_ptr<DistDirectFactorization> factorize_distributed_mumps(const DSparseTensor& a,
                                                                     const DistFactorOptions& options) {
  return std::make_shared<MumpsFactorization>(a, options);
}

bool mumps_available() { return true; }

}  // namespace tessera::sla::detail
#else  // TESSERA_WITH_MUMPS

namespace tessera::sla::detail {

bool mumps_available() { return false; }

std::shared_ptr<DistDirectFactorization> factorize_distributed_mumps(const DSparseTensor&, const DistFactorOptions&) {
  TESSERA_THROW(NotCompiled, "MUMPS is not compiled into this build (TESSERA_WITH_MUMPS=OFF)");
}

}  // namespace tessera::sla::detail
#endif  // TESSERA_WITH_MUMPS
