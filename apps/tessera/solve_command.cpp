// `tessera solve`: solve a sparse linear system (MatrixMarket or a Poisson generator).

#include "commands.h"
#include "tessera/core/error.h"

namespace tessera::app {

void add_solve_command(CLI::App& app, CommandBody& body) {
  CLI::App* cmd = app.add_subcommand("solve", "solve a sparse linear system (MatrixMarket or a Poisson generator)");
  cmd->allow_extras();
  cmd->callback([&body] {
    body = []() -> int {
      TESSERA_THROW(Unsupported, "'tessera solve' is not implemented in this version yet");
    };
  });
}

}  // namespace tessera::app
