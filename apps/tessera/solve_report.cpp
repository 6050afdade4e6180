// Shared parts of `tessera solve` (and eigsh, logdet): the matrix source, option conversion
// and the printed report.

#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "solve_cli.h"
#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"
#include "tessera/dist/guard.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/matrix_market.h"

namespace tessera::app {

void check_matrix_source(const SolveCommandOptions& o) {
  const int generated = (o.diffusion2d > 0) + (o.diffusion3d > 0) + (o.fe_laplacian2d > 0);
  const int sources = !o.matrix.empty() + (o.poisson2d > 0) + (o.poisson3d > 0) + generated;
  TESSERA_CHECK(sources == 1, InvalidInput,
                "give exactly one of A.mtx, --poisson2d N, --poisson3d N, --diffusion2d N, --diffusion3d N, "
                "--fe-laplacian2d N");
  TESSERA_CHECK(generated == 0 || dist::world()->size() == 1, Unsupported,
                "--diffusion2d, --diffusion3d and --fe-laplacian2d run in one process (without mpirun)");
}

sla::SparseTensor load_matrix(const SolveCommandOptions& o) {
  check_matrix_source(o);
  if (o.poisson2d > 0) return sla::poisson2d(o.poisson2d);
  if (o.poisson3d > 0) return sla::poisson3d(o.poisson3d);
  if (o.diffusion2d > 0) return sla::variable_diffusion2d(o.diffusion2d, {o.sigma, o.seed});
  if (o.diffusion3d > 0) return sla::variable_diffusion3d(o.diffusion3d, {o.sigma, o.seed});
  if (o.fe_laplacian2d > 0) return sla::fe_laplacian2d(o.fe_laplacian2d, {o.jitter, true, o.seed});
  return sla::read_sparse_matrix_market(o.matrix);
}

sla::SolveOptions to_solve_options(const SolveCommandOptions& o) {
  sla::SolveOptions options;
  options.backend = sla::parse_backend(o.backend);
  options.method = sla::parse_method(o.method);
  options.rtol = o.rtol;
  options.atol = o.atol;
  options.maxiter = o.maxiter;
  options.preconditioner = sla::parse_preconditioner(o.preconditioner);
  // the one environment setting of `tessera solve`, read here at the edge (README)
  if (const char* budget = std::getenv("TESSERA_SOLVE_MEMORY_BUDGET")) {
    const double bytes = std::atof(budget);
    TESSERA_CHECK(bytes > 0, InvalidInput, "TESSERA_SOLVE_MEMORY_BUDGET must be a positive number of bytes, got '",
                  budget, "'");
    options.memory_budget_bytes = bytes;
  }
  return options;
}

int report_solve(const SolveCommandOptions& o, const sla::SolveInfo& info, double seconds, int64_t n,
                 int64_t nnz, int ranks) {
  if (dist::world()->rank() == 0) {
    nlohmann::json out = {{"backend", info.backend},   {"method", sla::to_string(info.method)},
                          {"status", sla::to_string(info.status)}, {"iterations", info.iterations},
                          {"seconds", seconds},        {"residual", info.residual},
                          {"n", n},                    {"nnz", nnz},
                          {"ranks", ranks}};
    if (!info.message.empty()) out["message"] = info.message;
    if (!info.spmv_format.empty()) out["spmv_format"] = info.spmv_format;   // native Krylov's product storage
    if (o.json) {
      std::cout << out.dump() << std::endl;
    } else {
      std::cout << "n: " << n << "  nnz: " << nnz << "  ranks: " << ranks << "\nbackend: " << info.backend
                << "  method: " << sla::to_string(info.method) << "\nstatus: " << sla::to_string(info.status)
                << "  iterations: " << info.iterations
                << (info.spmv_format.empty() ? "" : "  spmv: " + info.spmv_format) << "\ntime: " << seconds
                << " s\nrelative residual ||Ax-b||/||b||: " << info.residual << std::endl;
    }
  }
  if (info.status == sla::SolveStatus::Converged) return dist::kExitOk;
  if (dist::world()->rank() == 0) {
    std::cerr << "tessera solve: " << sla::to_string(info.status) << ": " << info.message << std::endl;
  }
  return dist::kExitNumerical;
}

}  // namespace tessera::app
