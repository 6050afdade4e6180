// `tessera eigsh` and `tessera logdet`: a few eigenpairs, or the log-determinant, of a
// sparse matrix (MatrixMarket or a generator). In one process they call eigsh / slogdet;
// under mpirun -np P > 1 the rows are distributed and they call deigsh / dslogdet (the
// native block Lanczos across ranks; MUMPS's LU determinant).

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
#include "tessera/sla/determinant.h"
#include "tessera/sla/dist/deigsh.h"
#include "tessera/sla/dist/dlogdet.h"
#include "tessera/sla/eigsh.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/matrix_market.h"

namespace tessera::app {
namespace {

struct SpectralOptions {
  SolveCommandOptions source;   ///< the matrix: A.mtx, --poisson2d, --poisson3d (and generators in one process)
  int64_t k = 6;
  std::string which = "largest";
  double sigma = 0.0;
  bool has_sigma = false;
};

bool distributed() { return dist::world()->size() > 1; }


double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Prints `out` on rank 0 (JSON or key: value lines).
void print(const nlohmann::json& out, bool json) {
  if (dist::world()->rank() != 0) return;
  if (json) {
    std::cout << out.dump() << std::endl;
    return;
  }
  for (auto it = out.begin(); it != out.end(); ++it) std::cout << it.key() << ": " << it.value().dump() << "\n";
  std::cout << std::flush;
}

int run_eigsh(const SpectralOptions& o) {
  sla::EigshOptions options;
  options.k = o.k;
  options.which = o.has_sigma ? sla::Which::Nearest : o.which == "smallest" ? sla::Which::Smallest : sla::Which::Largest;
  options.sigma = o.sigma;
  const auto start = std::chrono::steady_clock::now();
  sla::EigshResult r;
  int64_t n = 0;
  if (distributed()) {
    options.backend = sla::EigshBackend::Native;
    sla::DSparseTensor a = load_distributed_matrix(o.source);
    n = a.rows();
    r = sla::deigsh(a, options);
  } else {
    sla::SparseTensor a = load_matrix(o.source);
    n = a.rows();
    r = sla::eigsh(a, options);
  }
  const at::Tensor values = r.eigenvalues.detach().to(at::kDouble).contiguous();
  nlohmann::json out = {{"n", n},
                        {"ranks", dist::world()->size()},
                        {"backend", r.info.backend},
                        {"status", sla::to_string(r.info.status)},
                        {"eigenvalues", std::vector<double>(values.data_ptr<double>(),
                                                            values.data_ptr<double>() + values.numel())},
                        {"max_residual", r.info.max_residual},
                        {"iterations", r.info.iterations},
                        {"seconds", seconds_since(start)}};
  if (!r.info.message.empty()) out["message"] = r.info.message;
  print(out, o.source.json);
  return r.info.status == sla::SolveStatus::Converged ? dist::kExitOk : dist::kExitNumerical;
}

int run_logdet(const SpectralOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  sla::SlogdetResult r;
  int64_t n = 0;
  if (distributed() || o.source.backend == "mumps") {
    sla::DSparseTensor a = load_distributed_matrix(o.source);
    n = a.rows();
    r = sla::dslogdet(a);
  } else {
    sla::SparseTensor a = load_matrix(o.source);
    n = a.rows();
    sla::DetOptions det;
    det.backend = sla::parse_backend(o.source.backend);
    r = sla::slogdet(a, det);
  }
  nlohmann::json out = {{"n", n},
                        {"ranks", dist::world()->size()},
                        {"backend", r.info.backend},
                        {"status", sla::to_string(r.info.status)},
                        {"sign", r.sign.item<double>()},
                        {"logabsdet", r.logabsdet.item<double>()},
                        {"seconds", seconds_since(start)}};
  if (!r.info.message.empty()) out["message"] = r.info.message;
  print(out, o.source.json);
  return r.info.status == sla::SolveStatus::Converged ? dist::kExitOk : dist::kExitNumerical;
}

// The matrix-source options shared with `tessera solve`.
void add_source_options(CLI::App* cmd, SolveCommandOptions& s) {
  cmd->add_option("matrix", s.matrix, "A in MatrixMarket coordinate format")->check(CLI::ExistingFile);
  cmd->add_option("--poisson2d", s.poisson2d, "2D Poisson on an N x N grid")->check(kPositive);
  cmd->add_option("--poisson3d", s.poisson3d, "3D Poisson on an N^3 grid")->check(kPositive);
  cmd->add_option("--diffusion2d", s.diffusion2d, "variable-coefficient diffusion, N x N (one process)")
      ->check(kPositive);
  cmd->add_flag("--json", s.json, "print one JSON object");
}

}  // namespace

void add_spectral_commands(CLI::App& app, CommandBody& body) {
  auto e = std::make_shared<SpectralOptions>();
  CLI::App* eig = app.add_subcommand(
      "eigsh", "a few eigenpairs of a symmetric sparse matrix (under mpirun: rows distributed, native Lanczos)");
  add_source_options(eig, e->source);
  eig->add_option("--k", e->k, "number of eigenpairs (default 6)")->check(kPositive);
  eig->add_option("--which", e->which, "largest or smallest (default largest)")
      ->check(CLI::IsMember({"largest", "smallest"}));
  auto* sigma = eig->add_option("--sigma", e->sigma, "eigenvalues nearest sigma (shift-invert; MUMPS under mpirun)");
  eig->callback([e, sigma, &body] {
    e->has_sigma = sigma->count() > 0;
    body = [e] { return run_eigsh(*e); };
  });

  auto d = std::make_shared<SpectralOptions>();
  CLI::App* det = app.add_subcommand(
      "logdet", "sign and log|det A| of a sparse matrix (under mpirun or --backend mumps: MUMPS's distributed LU)");
  add_source_options(det, d->source);
  det->add_option("--backend", d->source.backend, "auto, cholmod, umfpack (one process) or mumps")
      ->check(CLI::IsMember({"auto", "cholmod", "umfpack", "mumps"}));
  det->callback([d, &body] { body = [d] { return run_logdet(*d); }; });
}

}  // namespace tessera::app
