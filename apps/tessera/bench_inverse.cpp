// `tessera bench inverse`: the conductivity inverse problem (fit_conductivity) timed end to
// end; one JSON line per reported step and a summary line.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "commands.h"
#include "tessera/sla/inverse_conductivity.h"

namespace tessera::app {
namespace {

struct InverseBenchOptions {
  sla::InverseConductivityOptions fit;
  int64_t report_every = 50;
};

int run_inverse(const InverseBenchOptions& o) {
  auto step_line = [&](const sla::InverseConductivityStep& s) {
    if (o.report_every <= 0 || s.step % o.report_every != 0) return;
    std::cout << nlohmann::json{{"bench", "inverse"}, {"step", s.step}, {"misfit", s.misfit},
                                {"kappa_rel_error", s.kappa_error}, {"u_rel_error", s.u_error},
                                {"seconds", s.seconds}}.dump()
              << std::endl;
  };
  sla::InverseConductivityResult r = sla::fit_conductivity(o.fit, step_line);
  std::cout << nlohmann::json{{"bench", "inverse"}, {"summary", true}, {"grid", o.fit.grid},
                              {"basis", o.fit.basis}, {"steps", r.steps}, {"stop_reason", r.stop_reason},
                              {"misfit", r.last.misfit}, {"kappa_rel_error", r.last.kappa_error},
                              {"u_rel_error", r.last.u_error}, {"best_step", r.last.step}, {"seconds", r.seconds},
                              {"solver", r.solve_info.backend + "/" + sla::to_string(r.solve_info.method)},
                              {"threads", at::get_num_threads()}}.dump()
            << std::endl;
  return r.stop_reason == "solve_failed" ? 3 : 0;
}

}  // namespace

void add_bench_inverse(CLI::App& bench, CommandBody& body) {
  auto options = std::make_shared<InverseBenchOptions>();
  CLI::App* cmd = bench.add_subcommand("inverse", "recover a conductivity field by differentiating through solve");
  cmd->add_option("--n", options->fit.grid, "grid side (n x n cells)")->check(CLI::Range(2, 4096));
  cmd->add_option("--basis", options->fit.basis, "Chebyshev modes per direction (0: one parameter per cell)")
      ->check(kNonNegative);
  cmd->add_option("--steps", options->fit.max_steps, "maximum Adam steps")->check(kPositive);
  cmd->add_option("--lr", options->fit.lr, "Adam step size")->check(kPositive);
  cmd->add_option("--lr-decay", options->fit.lr_decay, "step-size decay per step")->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--misfit-tol", options->fit.misfit_tol, "stop when the relative H1 misfit is below");
  cmd->add_option("--time-limit", options->fit.time_limit_seconds, "seconds");
  cmd->add_option("--report-every", options->report_every, "print every k-th step (0: summary only)");
  cmd->callback([&body, options]() { body = [options]() { return run_inverse(*options); }; });
}

}  // namespace tessera::app
