// `tessera bounds`: bound a network's outputs over a VNN-LIB input region.

#include "commands.h"
#include "tessera/core/error.h"

namespace tessera::app {

void add_bounds_command(CLI::App& app, CommandBody& body) {
  CLI::App* cmd = app.add_subcommand("bounds", "bound a network's outputs over a VNN-LIB input region");
  cmd->allow_extras();
  cmd->callback([&body] {
    body = []() -> int {
      TESSERA_THROW(Unsupported, "'tessera bounds' is not implemented in this version yet");
    };
  });
}

}  // namespace tessera::app
