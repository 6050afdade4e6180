// `tessera bench cg`: tessera's native CG (the public solve, fused CPU loop) on 2D Poisson
// (or, with --matrix, a generated matrix that is not a stencil), float64, random b, with the bandwidth floor of an iteration from the STREAM triad measured
// in the same program. One JSON line per (format, preconditioner). The peers (SciPy, torch,
// Eigen) are run beside it by bench/sla_peers.sh.
//
// With --iterations K the time per iteration is (t(K) - t(1)) / (K - 1): the set-up (property
// detection, float64 copy, SpMV plan, final residual) is measured by a 1-iteration solve and
// left out. Without it: time to solution / iterations.
//
// Bytes per iteration (the floor's numerator): the SpMV's (PreparedMatvec::bytes_per_apply)
// plus the fused vector passes: x += a p, r -= a q, <r, r> reads 4 vectors and writes 2;
// p = r + b p reads 2 and writes 1: 72 bytes per row; Jacobi adds d read and z written: 88.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bench_stream.h"
#include "cli_checks.h"
#include "commands.h"
#include "tessera/core/error.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/prepared_matvec.h"
#include "tessera/sla/solve.h"

namespace tessera::app {
namespace {

struct CgBenchOptions {
  int64_t grid = 1000;          // n: n^2 unknowns (n^3 for diffusion3d)
  std::string matrix = "poisson2d";   // poisson2d, diffusion2d, diffusion3d, fe-laplacian2d
  double rtol = 1e-8;
  int64_t iterations = 0;       // > 0: run exactly this many (rtol 0): time per iteration at large n
  int repeats = 3;
  std::string formats = "stencil,csr";   // auto: what solve() runs (stencil, SELL or CSR)
  std::string preconditioners = "none,jacobi";
};

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream s(list);
  for (std::string item; std::getline(s, item, ',');) out.push_back(item);
  return out;
}

nlohmann::json run_one(const sla::SparseTensor& a, const at::Tensor& b, const CgBenchOptions& o,
                       const std::string& format, const std::string& pre, double stream) {
  TESSERA_CHECK(format == "stencil" || format == "csr" || format == "auto", InvalidInput,
                "--formats: stencil, csr or auto, got ", format);
  TESSERA_CHECK(pre == "none" || pre == "jacobi", InvalidInput, "--preconditioners: none or jacobi, got ", pre);
  sla::SolveOptions opts;
  opts.backend = sla::Backend::Native;
  opts.stencil_spmv = format != "csr";   // the product the solver's CsrOperator uses: Auto unless csr
  opts.method = sla::Method::CG;
  opts.preconditioner = pre == "jacobi" ? sla::Preconditioner::Jacobi : sla::Preconditioner::None;
  opts.rtol = o.iterations > 0 ? 0.0 : o.rtol;
  opts.maxiter = o.iterations > 0 ? o.iterations : 100000;
  std::vector<double> seconds, setup;
  sla::SolveInfo info;
  for (int r = 0; r < o.repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    auto result = sla::solve(a, b, opts);
    seconds.push_back(seconds_since(t0));
    info = result.second;
    if (o.iterations > 1) {   // fixed count: the same solve with 1 iteration is the set-up cost
      sla::SolveOptions one = opts;
      one.maxiter = 1;
      auto t1 = std::chrono::steady_clock::now();
      sla::solve(a, b, one);
      setup.push_back(seconds_since(t1));
    }
  }
  const sla::PreparedMatvec op(a, format == "csr"       ? sla::SpmvFormat::Csr
                                  : format == "stencil" ? sla::SpmvFormat::Stencil
                                                        : sla::SpmvFormat::Auto);
  const double n = static_cast<double>(a.rows());
  const double bytes = op.bytes_per_apply() + (pre == "jacobi" ? 88.0 : 72.0) * n;
  // per iteration: (t(K) - t(1)) / (K - 1) with a fixed count K (set-up excluded), else t / iterations
  const double t = median(seconds), t_setup = setup.empty() ? 0.0 : median(setup);
  // Under heavy machine load t(1) can exceed t(K): then fall back to t / K and say so.
  const bool subtracted = !setup.empty() && t > t_setup;
  const double per_it = subtracted ? (t - t_setup) / static_cast<double>(info.iterations - 1)
                                   : t / std::max<int64_t>(1, info.iterations);
  const double floor = bytes / (stream * 1e9);
  return {{"bench", "cg"}, {"solver", "tessera-cg"}, {"format", format}, {"kernel", info.spmv_format},
          {"preconditioner", pre},
          {"dof", a.rows()}, {"nnz", a.nnz()}, {"threads", at::get_num_threads()}, {"rtol", opts.rtol},
          {"iterations", info.iterations}, {"status", sla::to_string(info.status)}, {"residual", info.residual},
          {"seconds_median", t}, {"seconds_per_iteration_median", per_it}, {"bytes_per_iteration", bytes},
          {"stream_gbs", stream}, {"floor_seconds_per_iteration", floor}, {"ratio_to_floor", per_it / floor},
          {"setup_seconds_median", t_setup}, {"setup_subtracted", subtracted}, {"repeats", o.repeats}};
}

/// The generated matrices of `tessera solve` with their defaults (sigma 1, jitter 0.3, seed 0).
sla::SparseTensor generated_matrix(const std::string& name, int64_t n) {
  if (name == "poisson2d") return sla::poisson2d(n);
  if (name == "diffusion2d") return sla::variable_diffusion2d(n);
  if (name == "diffusion3d") return sla::variable_diffusion3d(n);
  if (name == "fe-laplacian2d") return sla::fe_laplacian2d(n);
  TESSERA_THROW(InvalidInput, "--matrix: poisson2d, diffusion2d, diffusion3d or fe-laplacian2d, got ", name);
}

int run_cg_bench(const CgBenchOptions& o) {
  const double stream = stream_triad_gbs();
  const sla::SparseTensor a = generated_matrix(o.matrix, o.grid);
  at::manual_seed(0);
  const at::Tensor b = at::randn({a.rows()}, at::kDouble);
  for (const std::string& format : split(o.formats)) {
    for (const std::string& pre : split(o.preconditioners)) {
      nlohmann::json line = run_one(a, b, o, format, pre, stream);
      line["matrix"] = o.matrix;
      std::cout << line.dump() << std::endl;
    }
  }
  return 0;
}

}  // namespace

void add_bench_cg(CLI::App& bench, CommandBody& body) {
  auto o = std::make_shared<CgBenchOptions>();
  CLI::App* cmd = bench.add_subcommand("cg", "native CG on 2D Poisson: time per iteration vs the bandwidth floor");
  cmd->add_option("--n", o->grid, "grid size n (n^2 unknowns, n^3 for diffusion3d)")->check(kPositive);
  cmd->add_option("--matrix", o->matrix,
                  "poisson2d, diffusion2d, diffusion3d (log-normal kappa, sigma 1, seed 0), fe-laplacian2d "
                  "(jitter 0.3, seed 0)")
      ->check(CLI::IsMember({"poisson2d", "diffusion2d", "diffusion3d", "fe-laplacian2d"}));
  cmd->add_option("--rtol", o->rtol, "relative tolerance")->check(kPositive);
  cmd->add_option("--iterations", o->iterations, "run exactly this many iterations (rtol 0)")
      ->check(kNonNegative);
  cmd->add_option("--repeats", o->repeats, "runs (median reported)")->check(kPositive);
  cmd->add_option("--formats", o->formats,
                  "comma-separated: stencil, csr, auto (solve's default: stencil form, SELL-C-sigma or CSR by "
                  "the cheap rule; the JSON's kernel says which)");
  cmd->add_option("--preconditioners", o->preconditioners, "comma-separated: none, jacobi");
  add_json_always_on(cmd);
  cmd->callback([o, &body] { body = [o] { return run_cg_bench(*o); }; });
}

}  // namespace tessera::app
