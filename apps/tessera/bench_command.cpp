// `tessera bench`: run a benchmark and print JSON lines.

#include "commands.h"
#include "tessera/core/error.h"

namespace tessera::app {

void add_bench_command(CLI::App& app, CommandBody& body) {
  CLI::App* cmd = app.add_subcommand("bench", "run a benchmark and print JSON lines");
  cmd->allow_extras();
  cmd->callback([&body] {
    body = []() -> int {
      TESSERA_THROW(Unsupported, "'tessera bench' is not implemented in this version yet");
    };
  });
}

}  // namespace tessera::app
