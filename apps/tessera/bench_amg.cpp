// `tessera bench amg`: the set-up preconditioners of the native Krylov solvers against
// CG + Jacobi in the same run: AMG-CG on 2D Poisson over sizes, 3D Poisson, MINRES on a
// shifted (indefinite) Laplacian, GMRES + ILU(0) on convection-diffusion, IC(0) and hypre's
// BoomerAMG where compiled; and AMG-CG on the generated matrices that are not stencils
// (log-normal diffusion in 2D and 3D, the P1 finite-element Laplacian), only when asked.
// One JSON line per solve.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "bench_stream.h"
#include "cli_checks.h"
#include "commands.h"
#include "tessera/core/error.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/preconditioners.h"
#include "tessera/sla/solve.h"

namespace tessera::app {
namespace {

struct AmgBenchOptions {
  std::vector<int64_t> grids;       // 2D grid sides; empty: 256 512 1024 2048 4096
  std::string only;                 // run one case: poisson2d, jacobi, poisson3d, minres, gmres, ic0, boomeramg,
                                    // or (only when named) diffusion2d, diffusion3d, fe
  double rtol = 1e-8;
  int64_t n3d = 100;                // 3D grid side (1M DOF)
  int64_t n_indefinite = 256;
  int64_t n_convection = 512;
  sla::AmgOptions amg;              // the AMG's parameters (--amg-*)
  std::string cycle = "v";
  double sigma = 1.0;               // log-normal kappa's sigma (diffusion2d, diffusion3d)
};

/// Solves A x = b once and prints a JSON line; returns the total seconds.
double run_case(const std::string& name, const sla::SparseTensor& a, sla::Method method, sla::Preconditioner pc,
                const AmgBenchOptions& bo, nlohmann::json extra = {}) {
  const double rtol = bo.rtol;
  at::manual_seed(1);
  const at::Tensor b = at::rand({a.rows()}, at::kDouble);
  sla::SolveOptions o;
  o.backend = sla::Backend::Native;
  o.method = method;
  o.preconditioner = pc;
  o.rtol = rtol;
  o.maxiter = 100000;
  o.amg = bo.amg;
  nlohmann::json line = {{"bench", "amg"}, {"case", name}, {"dof", a.rows()}, {"nnz", a.nnz()},
                         {"method", sla::to_string(method)}, {"preconditioner", sla::to_string(pc)},
                         {"rtol", rtol}, {"threads", at::get_num_threads()}, {"load_average", load_average()}};
  if (pc != sla::Preconditioner::None && pc != sla::Preconditioner::Jacobi) {   // set-up alone, timed apart
    const sla::PreconditionerSetup setup = sla::setup_preconditioner(a, o);
    line["setup_seconds"] = setup.seconds;
    line["setup"] = setup.summary;
    if (pc == sla::Preconditioner::AMG) {
      line["amg"] = {{"strength", o.amg.strength},
                     {"weak_share", o.amg.weak_share},
                     {"cycle", bo.cycle},
                     {"smoother_degree", o.amg.smoother_degree},
                     {"smoother_ratio", o.amg.smoother_ratio}};
    }
  }
  core::MemoryLedger::reset_peak();
  const int64_t base = core::MemoryLedger::current_bytes();
  auto t0 = std::chrono::steady_clock::now();
  auto [x, info] = sla::solve(a, b, o);
  const double total = seconds_since(t0);
  line["seconds_to_solution"] = total;
  line["iterations"] = info.iterations;
  line["residual"] = info.residual;
  line["status"] = sla::to_string(info.status);
  line["peak_bytes_in_solve"] = core::MemoryLedger::peak_bytes() - base;
  for (auto& [k, v] : extra.items()) line[k] = v;
  std::cout << line.dump() << std::endl;
  return total;
}

int run_amg_bench(AmgBenchOptions o) {
  o.amg.cycle = o.cycle == "w" ? sla::AmgCycle::W : o.cycle == "k" ? sla::AmgCycle::K : sla::AmgCycle::V;
  using sla::Method;
  using sla::Preconditioner;
  auto want = [&](const char* c) { return o.only.empty() || o.only == c; };
  std::vector<int64_t> grids = o.grids.empty() ? std::vector<int64_t>{256, 512, 1024, 2048, 4096} : o.grids;
  if (o.only == "diffusion2d" || o.only == "fe") {   // log-normal kappa (sigma 1, seed 0); FE mesh jitter 0.3, seed 0
    for (int64_t n : grids) {
      const sla::SparseTensor a = o.only == "fe" ? sla::fe_laplacian2d(n, {.jitter = 0.3, .seed = 0})
                                                 : sla::variable_diffusion2d(n, {.sigma = o.sigma, .seed = 0});
      nlohmann::json extra = {{"grid", n}};
      if (o.only == "diffusion2d") extra["sigma"] = o.sigma;
      run_case(o.only, a, Method::CG, Preconditioner::AMG, o, extra);
    }
    return 0;
  }
  if (o.only == "diffusion3d") {
    run_case("diffusion3d", sla::variable_diffusion3d(o.n3d, {.sigma = o.sigma, .seed = 0}), Method::CG,
             Preconditioner::AMG, o, {{"grid", o.n3d}, {"sigma", o.sigma}});
    return 0;
  }
  const bool any2d = want("poisson2d") || want("jacobi") || want("ic0") || want("boomeramg");
  for (int64_t n : any2d ? grids : std::vector<int64_t>{}) {
    const sla::SparseTensor a = sla::poisson2d(n);
    double amg = 0;
    if (want("poisson2d")) amg = run_case("poisson2d", a, Method::CG, Preconditioner::AMG, o, {{"grid", n}});
    if (n == 1024 && want("jacobi")) {   // the peer of the 5x target, same run
      const double jac = run_case("poisson2d", a, Method::CG, Preconditioner::Jacobi, o, {{"grid", n}});
      if (amg > 0) std::cout << nlohmann::json{{"bench", "amg"}, {"case", "speedup_vs_jacobi"}, {"grid", n},
                                               {"ratio", jac / amg}}.dump() << std::endl;
    }
    if (n == 1024 && want("ic0")) run_case("poisson2d", a, Method::CG, Preconditioner::IC0, o, {{"grid", n}});
    if (n == 1024 && want("boomeramg")) {
      try {
        run_case("poisson2d", a, Method::CG, Preconditioner::BoomerAMG, o, {{"grid", n}});
      } catch (const NotCompiled& e) {
        std::cerr << "boomeramg skipped: " << e.what() << "\n";
      }
    }
  }
  if (want("poisson3d")) {
    run_case("poisson3d", sla::poisson3d(o.n3d), Method::CG, Preconditioner::AMG, o, {{"grid", o.n3d}});
  }
  if (want("minres")) {   // L - sigma I with sigma between eigenvalues: indefinite
    const double sigma = 0.01;
    const auto h = sla::shifted_laplacian2d(o.n_indefinite, sigma);
    run_case("shifted_laplacian2d", h, Method::MINRES, Preconditioner::Jacobi, o,
             {{"grid", o.n_indefinite}, {"shift", sigma}});
  }
  if (want("gmres")) {
    const auto c = sla::convection_diffusion2d(o.n_convection, 200.0, 100.0);
    for (Preconditioner pc : {Preconditioner::ILU0, Preconditioner::Jacobi}) {
      run_case("convection_diffusion2d", c, Method::GMRES, pc, o,
               {{"grid", o.n_convection}, {"wind", {200.0, 100.0}}});
    }
  }
  return 0;
}

}  // namespace

void add_bench_amg(CLI::App& bench, CommandBody& body) {
  auto o = std::make_shared<AmgBenchOptions>();
  CLI::App* cmd = bench.add_subcommand("amg", "AMG / IC(0) / ILU(0) preconditioned Krylov solves vs CG + Jacobi");
  cmd->add_option("--n", o->grids, "2D grid sides (n^2 unknowns); default 256 512 1024 2048 4096");
  cmd->add_option("--case", o->only,
                  "only this case: poisson2d, jacobi, ic0, boomeramg, poisson3d, minres, gmres; or one of the "
                  "generated matrices (AMG-CG, run only when named): diffusion2d, fe (over --n), diffusion3d (--n3d)");
  cmd->add_option("--rtol", o->rtol, "relative tolerance")->check(kPositive);
  cmd->add_option("--n3d", o->n3d, "3D grid side")->check(kPositive);
  cmd->add_option("--amg-strength", o->amg.strength, "AMG strength of connection theta")->check(CLI::NonNegativeNumber);
  cmd->add_option("--amg-weak-share", o->amg.weak_share,
                  "AMG: halve theta on a level while more than this share of its rows has no strong connection "
                  "(default 0.1; 1: theta on every level)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--amg-cycle", o->cycle, "v, w or k (K-cycle, flexible CG)")->check(CLI::IsMember({"v", "w", "k"}));
  cmd->add_option("--sigma", o->sigma, "sigma of the log-normal kappa (diffusion2d, diffusion3d; default 1)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--amg-degree", o->amg.smoother_degree, "Chebyshev degree")->check(kPositive);
  cmd->add_option("--amg-ratio", o->amg.smoother_ratio, "Chebyshev interval ratio (> 1)")->check(CLI::Range(1.0001, 1e9));
  add_json_always_on(cmd);
  cmd->callback([o, &body] { body = [o] { return run_amg_bench(*o); }; });
}

}  // namespace tessera::app
