// `tessera bench dist-cg`: distributed CG on the 2D Poisson matrix built rank-locally;
// prints one JSON line per run (rank 0) with the time per iteration and halo traffic.
// Jacobi (default): a fixed number of iterations (rtol 0). --rtol > 0: solves to that
// tolerance and reports the iterations; with --preconditioner boomeramg the set-up is timed
// alone (dsetup_preconditioner) and the time per iteration is the rest of the solve's time.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <string>
#include <nlohmann/json.hpp>

#include "bench_stream.h"
#include "cli_checks.h"
#include "commands.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/dist/communicator.h"
#include "tessera/sla/dist/dsolve.h"
#include "tessera/sla/dist/local_generators.h"
#include "tessera/sla/solve_options.h"

namespace tessera::app {
namespace {

struct DistCgOptions {
  int64_t grid = 2000;          // n: n^2 unknowns in total (strong scaling)
  int64_t dof_per_rank = 0;     // > 0: weak scaling, grid = sqrt(P * dof_per_rank)
  int64_t iterations = 100;     // fixed iteration count (rtol 0): time per iteration
  int repeats = 3;
  std::string preconditioner = "jacobi";
  double rtol = 0.0;            // > 0: solve to this tolerance instead of `iterations` iterations
};

int run_dist_cg(const DistCgOptions& o) {
  auto comm = dist::world();
  const int p = comm->size();
  int64_t n = o.grid;
  if (o.dof_per_rank > 0) n = static_cast<int64_t>(std::llround(std::sqrt(double(p) * o.dof_per_rank)));
  auto t_setup = std::chrono::steady_clock::now();
  auto partition = sla::RowPartition::contiguous(n * n, p);
  at::Tensor mine = partition.rows_of(comm->rank());
  auto a = sla::DSparseTensor::from_local_rows(comm, partition, sla::poisson2d_rows(n, mine));
  at::Tensor b = at::ones({a.owned_rows()}, at::kDouble);
  comm->barrier();
  const double setup = seconds_since(t_setup);

  sla::SolveOptions options;
  options.method = sla::Method::CG;
  options.preconditioner = sla::parse_preconditioner(o.preconditioner);
  options.rtol = o.rtol;  // 0: run exactly `iterations` iterations
  options.maxiter = o.rtol > 0 ? 0 : o.iterations;
  const bool set_up = options.preconditioner != sla::Preconditioner::Jacobi &&
                      options.preconditioner != sla::Preconditioner::None;
  std::vector<double> per_iteration, setups, solves;
  sla::SolveInfo info;
  for (int r = 0; r < o.repeats; ++r) {
    const double setup = set_up ? sla::dsetup_preconditioner(a, options).seconds : 0.0;
    comm->barrier();
    auto t0 = std::chrono::steady_clock::now();
    auto result = sla::dsolve(a, b, options);  // set-up (again) + iterations
    info = result.second;
    comm->barrier();
    const double total = seconds_since(t0);
    setups.push_back(setup);
    solves.push_back(total);
    per_iteration.push_back(std::max(0.0, total - setup) / std::max<int64_t>(1, info.iterations));
  }
  std::sort(per_iteration.begin(), per_iteration.end());
  std::sort(setups.begin(), setups.end());
  std::sort(solves.begin(), solves.end());
  // halo bytes per iteration: one exchange of doubles per matvec, summed over the ranks
  at::Tensor halo = at::full({1}, a.plan().exchange_bytes(sizeof(double)) / 2, at::kLong);
  comm->all_reduce(halo, dist::ReduceOp::Sum);
  at::Tensor peak = at::full({1}, core::MemoryLedger::peak_bytes(), at::kLong);
  comm->all_reduce(peak, dist::ReduceOp::Max);
  if (comm->rank() == 0) {
    nlohmann::json line = {{"bench", "dist-cg"},
                           {"ranks", p},
                           {"preconditioner", o.preconditioner},
                           {"rtol", o.rtol},
                           {"status", sla::to_string(info.status)},
                           {"grid", n},
                           {"dof", n * n},
                           {"threads_per_rank", at::get_num_threads()},
                           {"iterations", info.iterations},
                           {"seconds_per_iteration_median", per_iteration[per_iteration.size() / 2]},
                           {"seconds_per_iteration_min", per_iteration.front()},
                           {"halo_bytes_per_iteration", halo.item<int64_t>()},
                           {"setup_seconds", setup},
                           {"preconditioner_setup_seconds_median", setups[setups.size() / 2]},
                           {"solve_seconds_median", solves[solves.size() / 2]},
                           {"peak_bytes_per_rank_max", peak.item<int64_t>()}};
    std::cout << line.dump() << std::endl;
  }
  return 0;
}

}  // namespace

void add_bench_dist_cg(CLI::App& bench, CommandBody& body) {
  auto o = std::make_shared<DistCgOptions>();
  CLI::App* cmd = bench.add_subcommand("dist-cg", "distributed CG on 2D Poisson (run under mpirun -np P)");
  cmd->add_option("--n", o->grid, "grid size n (n^2 unknowns), strong scaling")->check(kPositive);
  cmd->add_option("--dof-per-rank", o->dof_per_rank, "weak scaling: unknowns per rank")->check(kNonNegative);
  cmd->add_option("--iterations", o->iterations, "CG iterations per run")->check(kPositive);
  cmd->add_option("--repeats", o->repeats, "runs; the median is reported")->check(kPositive);
  cmd->add_option("--preconditioner", o->preconditioner, "jacobi (default), boomeramg, block-jacobi")
      ->check(CLI::IsMember({"jacobi", "boomeramg", "block-jacobi"}));
  cmd->add_option("--rtol", o->rtol, "solve to this relative tolerance (default 0: --iterations iterations)")
      ->check(kNonNegative);
  add_json_always_on(cmd);
  cmd->callback([o, &body] { body = [o] { return run_dist_cg(*o); }; });
}

}  // namespace tessera::app
