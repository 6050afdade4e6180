// `tessera bench <name>`: benchmark programs printing JSON lines. Each benchmark lives in
// its own file (bench_<name>.cpp) and registers a subcommand here.

#include "commands.h"

namespace tessera::app {

void add_bench_bounds(CLI::App& bench, CommandBody& body);
void add_bench_dist_cg(CLI::App& bench, CommandBody& body);
void add_bench_adjoint_memory(CLI::App& bench, CommandBody& body);
void add_bench_inverse(CLI::App& bench, CommandBody& body);
void add_bench_amg(CLI::App& bench, CommandBody& body);
void add_bench_spmv(CLI::App& bench, CommandBody& body);
void add_bench_cg(CLI::App& bench, CommandBody& body);
void add_bench_direct(CLI::App& bench, CommandBody& body);
void add_bench_scale(CLI::App& bench, CommandBody& body);
void add_bench_shard(CLI::App& bench, CommandBody& body);
void add_bench_soundness(CLI::App& bench, CommandBody& body);

void add_bench_command(CLI::App& app, CommandBody& body) {
  CLI::App* cmd = app.add_subcommand("bench", "run a benchmark and print JSON lines");
  cmd->require_subcommand(1);
  add_bench_bounds(*cmd, body);
  add_bench_dist_cg(*cmd, body);
  add_bench_adjoint_memory(*cmd, body);
  add_bench_inverse(*cmd, body);
  add_bench_amg(*cmd, body);
  add_bench_spmv(*cmd, body);
  add_bench_cg(*cmd, body);
  add_bench_direct(*cmd, body);
  add_bench_scale(*cmd, body);
  add_bench_shard(*cmd, body);
  add_bench_soundness(*cmd, body);
}

}  // namespace tessera::app
