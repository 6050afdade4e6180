// `tessera bench direct`: the `auto` solve of 2D Poisson (what dispatch picks, property
// detection and the solve, timed separately), float64, random b. SciPy's spsolve on the
// same matrix runs beside it in bench/sla_peers.sh.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "bench_stream.h"
#include "cli_checks.h"
#include "commands.h"
#include "tessera/sla/generators.h"
#include "tessera/sla/solve.h"

namespace tessera::app {
namespace {

struct DirectBenchOptions {
  int64_t grid = 1000;   // n: n^2 unknowns
  int repeats = 3;
};

int run_direct_bench(const DirectBenchOptions& o) {
  const sla::SparseTensor a = sla::poisson2d(o.grid);
  at::manual_seed(0);
  const at::Tensor b = at::randn({a.rows()}, at::kDouble);
  auto t_props = std::chrono::steady_clock::now();
  const sla::MatrixProperties props = sla::detect_properties(a);
  const double props_seconds = seconds_since(t_props);
  const sla::SolverChoice choice = sla::choose_solver(a, props, sla::SolveOptions{});
  std::vector<double> seconds;
  sla::SolveInfo info;
  for (int r = 0; r < o.repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    auto result = sla::solve(a, b);   // backend "auto"
    seconds.push_back(seconds_since(t0));
    info = result.second;
  }
  nlohmann::json line = {{"bench", "direct"}, {"solver", "tessera-auto"}, {"dof", a.rows()}, {"nnz", a.nnz()},
                         {"choice_backend", sla::to_string(choice.backend)}, {"choice_method", sla::to_string(choice.method)},
                         {"ran_backend", info.backend}, {"ran_method", sla::to_string(info.method)},
                         {"estimated_factor_bytes", sla::estimated_factor_bytes(a, false)},
                         {"detect_properties_seconds", props_seconds}, {"seconds_median", median(seconds)},
                         {"seconds_min", *std::min_element(seconds.begin(), seconds.end())},
                         {"status", sla::to_string(info.status)}, {"residual", info.residual},
                         {"iterations", info.iterations}, {"threads", at::get_num_threads()},
                         {"repeats", o.repeats}};
  std::cout << line.dump() << std::endl;
  return 0;
}

}  // namespace

void add_bench_direct(CLI::App& bench, CommandBody& body) {
  auto o = std::make_shared<DirectBenchOptions>();
  CLI::App* cmd = bench.add_subcommand("direct", "the auto (direct) solve of 2D Poisson, timed");
  cmd->add_option("--n", o->grid, "grid size n (n^2 unknowns)")->check(kPositive);
  cmd->add_option("--repeats", o->repeats, "runs (median reported)")->check(kPositive);
  add_json_always_on(cmd);
  cmd->callback([o, &body] { body = [o] { return run_direct_bench(*o); }; });
}

}  // namespace tessera::app
