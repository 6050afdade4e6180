#pragma once
// Options and reporting shared by the single-process and distributed `tessera solve`.

#include <cstdint>
#include <string>

#include "tessera/sla/dist/dsparse_tensor.h"
#include "tessera/sla/solve_options.h"

namespace tessera::app {

struct SolveCommandOptions {
  std::string matrix;
  std::string rhs;
  int64_t poisson2d = 0;
  int64_t poisson3d = 0;
  int64_t diffusion2d = 0;      ///< variable_diffusion2d(N) with --sigma, --seed
  int64_t diffusion3d = 0;      ///< variable_diffusion3d(N)
  int64_t fe_laplacian2d = 0;   ///< fe_laplacian2d(N) with --jitter, --seed
  double sigma = 1.0;
  double jitter = 0.3;
  uint64_t seed = 0;
  std::string backend = "auto";
  std::string method = "auto";
  std::string preconditioner = "jacobi";
  double rtol = 1e-10;
  double atol = 0.0;
  int64_t maxiter = 0;
  bool json = false;
};

/// Throws InvalidInput unless exactly one of A.mtx, --poisson2d, --poisson3d, --diffusion2d,
/// --diffusion3d, --fe-laplacian2d is given; Unsupported for the last three under mpirun.
void check_matrix_source(const SolveCommandOptions& o);
/// The matrix source of `o` whole, in one process (check_matrix_source first).
sla::SparseTensor load_matrix(const SolveCommandOptions& o);
sla::SolveOptions to_solve_options(const SolveCommandOptions& o);
/// Prints the outcome (text or JSON, on rank 0 only) and returns the exit code:
/// 0 when converged, kExitNumerical otherwise (with the reason on standard error).
int report_solve(const SolveCommandOptions& o, const sla::SolveInfo& info, double seconds, int64_t n,
                 int64_t nnz, int ranks);
/// `tessera solve` under mpirun -np P > 1: rows distributed, native Krylov methods.
int run_distributed_solve(const SolveCommandOptions& o);
/// The matrix source of `o` (a file or --poisson2d/3d) distributed by contiguous rows
/// (collective): Poisson rows built where they are owned, a file read on rank 0 and
/// scattered. `root_matrix` (optional) receives the file's matrix on rank 0.
sla::DSparseTensor load_distributed_matrix(const SolveCommandOptions& o, sla::SparseTensor* root_matrix = nullptr);

}  // namespace tessera::app
