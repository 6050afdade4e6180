// `tessera solve`: solve a sparse linear system (MatrixMarket or a generator: Poisson, variable-coefficient
// diffusion, finite-element Laplacian) and report backend, method, status, iterations, time and ||A x - b|| / ||b||.

#include <ATen/ATen.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "commands.h"
#include "solve_cli.h"
#include "tessera/core/error.h"
#include "tessera/dist/communicator.h"
#include "tessera/dist/guard.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/matrix_market.h"
#include "tessera/sla/solve.h"

namespace tessera::app {
namespace {

int run_solve(const SolveCommandOptions& o) {
  // under mpirun -np P > 1, and MUMPS (distributed only) on any number of ranks
  if (dist::world()->size() > 1 || o.backend == "mumps") return run_distributed_solve(o);
  sla::SparseTensor a = load_matrix(o);
  sla::SolveOptions options = to_solve_options(o);
  // b = A 1 when no right-hand side is given
  at::Tensor b = o.rhs.empty() ? sla::matvec(a, at::ones({a.cols()}, at::kDouble)) : sla::read_dense_matrix_market(o.rhs);
  const auto start = std::chrono::steady_clock::now();
  auto [x, info] = sla::solve(a, b, options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report_solve(o, info, seconds, a.rows(), a.nnz(), /*ranks=*/1);
}

}  // namespace

void add_solve_command(CLI::App& app, CommandBody& body) {
  auto o = std::make_shared<SolveCommandOptions>();
  CLI::App* cmd = app.add_subcommand("solve", "solve a sparse linear system (MatrixMarket or a Poisson generator)");
  cmd->add_option("matrix", o->matrix, "A in MatrixMarket coordinate format")->check(CLI::ExistingFile);
  cmd->add_option("--rhs", o->rhs, "b in MatrixMarket (array) format; default b = A 1")->check(CLI::ExistingFile);
  auto* p2 = cmd->add_option("--poisson2d", o->poisson2d, "2D Poisson on an N x N grid")->check(kPositive);
  auto* p3 = cmd->add_option("--poisson3d", o->poisson3d, "3D Poisson on an N^3 grid")->check(kPositive);
  p2->excludes(p3);
  cmd->add_option("--diffusion2d", o->diffusion2d,
                  "-div(kappa grad u) on an N x N grid, log-normal kappa = exp(sigma z) (5-point finite volumes)")
      ->check(kPositive);
  cmd->add_option("--diffusion3d", o->diffusion3d, "the same on an N^3 grid (7-point)")->check(kPositive);
  cmd->add_option("--fe-laplacian2d", o->fe_laplacian2d,
                  "P1 finite-element Laplacian, N x N interior nodes of a perturbed triangle mesh")
      ->check(kPositive);
  cmd->add_option("--sigma", o->sigma, "standard deviation of log kappa for --diffusion2d/3d (default 1)")
      ->check(kNonNegative);
  cmd->add_option("--jitter", o->jitter, "node jitter of --fe-laplacian2d in [0, 0.5), times h (default 0.3)")
      ->check(CLI::Range(0.0, 0.4999));
  cmd->add_option("--seed", o->seed, "seed of kappa (--diffusion2d/3d) or of the mesh (--fe-laplacian2d)");
  cmd->add_option("--backend", o->backend,
                  "auto, native, eigen, cholmod, umfpack, superlu, mumps (distributed LU; any number of ranks)")
      ->check(CLI::IsMember({"auto", "native", "eigen", "cholmod", "umfpack", "superlu", "mumps"}));
  cmd->add_option("--method", o->method, "auto, cholesky, ldlt, lu, cg, bicgstab, gmres, minres")
      ->check(CLI::IsMember({"auto", "cholesky", "ldlt", "lu", "cg", "bicgstab", "gmres", "minres"}));
  cmd->add_option("--preconditioner", o->preconditioner,
                  "Krylov preconditioner: jacobi, none, block-jacobi (distributed runs), amg, ic0, ilu0, "
                  "boomeramg (native Krylov; one process and under mpirun)")
      ->check(CLI::IsMember({"jacobi", "none", "block-jacobi", "amg", "ic0", "ilu0", "boomeramg"}));
  cmd->add_option("--rtol", o->rtol, "Krylov relative tolerance (default 1e-10)");
  cmd->add_option("--atol", o->atol, "Krylov absolute tolerance (default 0)");
  cmd->add_option("--maxiter", o->maxiter, "Krylov iteration limit (default 10 n, at most 100000)");
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->callback([o, &body] { body = [o] { return run_solve(*o); }; });
}

}  // namespace tessera::app
