// `tessera solve` under mpirun: rows distributed over the ranks (Poisson rows built where
// they are owned; a MatrixMarket file read on rank 0 and scattered), native Krylov solve with
// the preconditioners of dsolve (jacobi, none, block-jacobi, boomeramg), or MUMPS's LU
// (--backend mumps); with neither --backend nor --method, dsolve's auto dispatch chooses.

#include <ATen/ATen.h>

#include <chrono>

#include "solve_cli.h"
#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"
#include "tessera/sla/dist/dsolve.h"
#include "tessera/sla/dist/local_generators.h"
#include "tessera/sla/matrix_market.h"
#include "tessera/sla/solve.h"

namespace tessera::app {
namespace {

// The method `auto` resolves to, decided on rank 0 from the matrix's properties.
sla::Method auto_method(const sla::SparseTensor& a) {
  sla::MatrixProperties props = sla::detect_properties(a);
  if (props.spd_candidate()) return sla::Method::CG;
  return props.symmetric ? sla::Method::MINRES : sla::Method::BiCGStab;
}

}  // namespace

sla::DSparseTensor load_distributed_matrix(const SolveCommandOptions& o, sla::SparseTensor* root_matrix) {
  check_matrix_source(o);
  auto comm = dist::world();
  if (o.poisson2d > 0 || o.poisson3d > 0) {
    const int64_t n = o.poisson2d > 0 ? o.poisson2d * o.poisson2d : o.poisson3d * o.poisson3d * o.poisson3d;
    auto part = sla::RowPartition::contiguous(n, comm->size());
    at::Tensor mine = part.rows_of(comm->rank());
    auto rows = o.poisson2d > 0 ? sla::poisson2d_rows(o.poisson2d, mine) : sla::poisson3d_rows(o.poisson3d, mine);
    return sla::DSparseTensor::from_local_rows(comm, part, rows);
  }
  // rank 0 reads the file; the rows are scattered
  sla::SparseTensor global;
  at::Tensor rows = at::zeros({1}, at::kLong);
  if (comm->rank() == 0) {
    global = sla::read_sparse_matrix_market(o.matrix);
    rows[0] = global.rows();
  }
  comm->broadcast(rows, 0);
  auto part = sla::RowPartition::contiguous(rows[0].item<int64_t>(), comm->size());
  if (root_matrix) *root_matrix = global;
  return sla::DSparseTensor::scatter_from_root(comm, part, global);
}

int run_distributed_solve(const SolveCommandOptions& o) {
  auto comm = dist::world();
  sla::SolveOptions options = to_solve_options(o);
  TESSERA_CHECK(options.backend == sla::Backend::Auto || options.backend == sla::Backend::Native ||
                    options.backend == sla::Backend::Mumps,
                Unsupported, "under mpirun only the native Krylov backend and mumps run distributed; backend '",
                sla::to_string(options.backend), "' is single-process (run it without mpirun)");
  const bool direct = options.backend == sla::Backend::Mumps;
  if (direct) {
    TESSERA_CHECK(options.method == sla::Method::Auto || options.method == sla::Method::LU, Unsupported,
                  "--backend mumps factorises with LU; method ", sla::to_string(options.method), " is not available");
    options.method = sla::Method::LU;
  }
  TESSERA_CHECK(direct || options.method == sla::Method::Auto || options.method == sla::Method::CG ||
                    options.method == sla::Method::BiCGStab || options.method == sla::Method::GMRES ||
                    options.method == sla::Method::MINRES,
                Unsupported, "under mpirun the method must be a Krylov method (cg, bicgstab, gmres, minres), not ",
                sla::to_string(options.method));
  sla::SparseTensor global;   // the file's matrix, on rank 0 only
  sla::DSparseTensor a = load_distributed_matrix(o, &global);
  if (options.backend == sla::Backend::Auto && options.method == sla::Method::Auto) {
    // dsolve's own dispatch across ranks: MUMPS when the factor fits, else AMG-Krylov
  } else if (o.poisson2d > 0 || o.poisson3d > 0) {
    if (options.method == sla::Method::Auto) options.method = sla::Method::CG;  // SPD
  } else {
    // rank 0 decides `auto` from the file's matrix
    at::Tensor method = at::full({1}, static_cast<int64_t>(options.method), at::kLong);
    if (comm->rank() == 0 && options.method == sla::Method::Auto) method[0] = static_cast<int64_t>(auto_method(global));
    comm->broadcast(method, 0);
    options.method = static_cast<sla::Method>(method[0].item<int64_t>());
  }
  // b = A 1 when no right-hand side is given
  at::Tensor b;
  if (o.rhs.empty()) {
    b = a.matvec(at::ones({a.owned_rows()}, a.values().options()));
  } else {
    at::Tensor global_b = comm->rank() == 0 ? sla::read_dense_matrix_market(o.rhs) : at::Tensor();
    b = a.scatter(global_b, /*from_root=*/true);
  }
  comm->barrier();
  const auto start = std::chrono::steady_clock::now();
  auto [x, info] = sla::dsolve(a, b, options);
  comm->barrier();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report_solve(o, info, seconds, a.rows(), a.global_nnz(), comm->size());
}

}  // namespace tessera::app
