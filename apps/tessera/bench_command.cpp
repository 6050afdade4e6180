// `tessera bench`: run a benchmark and print JSON lines. Each benchmark body lives in its
// own file (bench_<what>.cpp) and registers a subcommand here.

#include "commands.h"
#include "tessera/core/error.h"

namespace tessera::app {

void add_bench_bounds(CLI::App& bench, CommandBody& body);

void add_bench_command(CLI::App& app, CommandBody& body) {
  CLI::App* cmd = app.add_subcommand("bench", "run a benchmark and print JSON lines");
  add_bench_bounds(*cmd, body);
  cmd->callback([&body] {
    if (!body) body = []() -> int { TESSERA_THROW(InvalidInput, "name a benchmark: tessera bench bounds"); };
  });
}

}  // namespace tessera::app
