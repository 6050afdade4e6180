// `tessera solve`: solve a sparse linear system (MatrixMarket or a Poisson generator) and
// report backend, method, status, iterations, time and ||A x - b|| / ||b||.

#include <ATen/ATen.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "tessera/core/error.h"
#include "tessera/dist/guard.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/matrix_market.h"
#include "tessera/sla/solve.h"

namespace tessera::app {
namespace {

struct SolveCommandOptions {
  std::string matrix;
  std::string rhs;
  int64_t poisson2d = 0;
  int64_t poisson3d = 0;
  std::string backend = "auto";
  std::string method = "auto";
  std::string preconditioner = "jacobi";
  double rtol = 1e-10;
  double atol = 0.0;
  int64_t maxiter = 0;
  bool json = false;
};

sla::SparseTensor load_matrix(const SolveCommandOptions& o) {
  const int sources = !o.matrix.empty() + (o.poisson2d > 0) + (o.poisson3d > 0);
  TESSERA_CHECK(sources == 1, InvalidInput, "give exactly one of A.mtx, --poisson2d N, --poisson3d N");
  if (o.poisson2d > 0) return sla::poisson2d(o.poisson2d);
  if (o.poisson3d > 0) return sla::poisson3d(o.poisson3d);
  return sla::read_sparse_matrix_market(o.matrix);
}

int run_solve(const SolveCommandOptions& o) {
  sla::SparseTensor a = load_matrix(o);
  sla::SolveOptions options;
  options.backend = o.backend;
  options.method = sla::parse_method(o.method);
  options.rtol = o.rtol;
  options.atol = o.atol;
  options.maxiter = o.maxiter;
  options.preconditioner = o.preconditioner == "none" ? sla::Preconditioner::None : sla::Preconditioner::Jacobi;
  // b = A 1 when no right-hand side is given
  at::Tensor b = o.rhs.empty() ? sla::matvec(a, at::ones({a.cols()}, at::kDouble)) : sla::read_dense_matrix_market(o.rhs);
  const auto start = std::chrono::steady_clock::now();
  auto [x, info] = sla::solve(a, b, options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  nlohmann::json out = {{"backend", info.backend},   {"method", sla::to_string(info.method)},
                        {"status", sla::to_string(info.status)}, {"iterations", info.iterations},
                        {"seconds", seconds},        {"residual", info.residual},
                        {"n", a.rows()},             {"nnz", a.nnz()}};
  if (!info.message.empty()) out["message"] = info.message;
  if (o.json) {
    std::cout << out.dump() << std::endl;
  } else {
    std::cout << "n: " << a.rows() << "  nnz: " << a.nnz() << "\nbackend: " << info.backend
              << "  method: " << sla::to_string(info.method) << "\nstatus: " << sla::to_string(info.status)
              << "  iterations: " << info.iterations << "\ntime: " << seconds << " s\nrelative residual ||Ax-b||/||b||: "
              << info.residual << std::endl;
  }
  if (info.status == sla::SolveStatus::Converged) return dist::kExitOk;
  std::cerr << "tessera solve: " << sla::to_string(info.status) << ": " << info.message << std::endl;
  return dist::kExitNumerical;
}

}  // namespace

void add_solve_command(CLI::App& app, CommandBody& body) {
  auto o = std::make_shared<SolveCommandOptions>();
  CLI::App* cmd = app.add_subcommand("solve", "solve a sparse linear system (MatrixMarket or a Poisson generator)");
  cmd->add_option("matrix", o->matrix, "A in MatrixMarket coordinate format")->check(CLI::ExistingFile);
  cmd->add_option("--rhs", o->rhs, "b in MatrixMarket (array) format; default b = A 1")->check(CLI::ExistingFile);
  auto* p2 = cmd->add_option("--poisson2d", o->poisson2d, "2D Poisson on an N x N grid")->check(CLI::PositiveNumber);
  auto* p3 = cmd->add_option("--poisson3d", o->poisson3d, "3D Poisson on an N^3 grid")->check(CLI::PositiveNumber);
  p2->excludes(p3);
  cmd->add_option("--backend", o->backend, "auto, native, eigen, cholmod, umfpack, superlu")
      ->check(CLI::IsMember({"auto", "native", "eigen", "cholmod", "umfpack", "superlu"}));
  cmd->add_option("--method", o->method, "auto, cholesky, ldlt, lu, cg, bicgstab, gmres, minres")
      ->check(CLI::IsMember({"auto", "cholesky", "ldlt", "lu", "cg", "bicgstab", "gmres", "minres"}));
  cmd->add_option("--preconditioner", o->preconditioner, "Krylov preconditioner: jacobi or none")
      ->check(CLI::IsMember({"jacobi", "none"}));
  cmd->add_option("--rtol", o->rtol, "Krylov relative tolerance (default 1e-10)");
  cmd->add_option("--atol", o->atol, "Krylov absolute tolerance (default 0)");
  cmd->add_option("--maxiter", o->maxiter, "Krylov iteration limit (default 10 n, at most 100000)");
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->callback([o, &body] { body = [o] { return run_solve(*o); }; });
}

}  // namespace tessera::app
