// `tessera verify`: decide a VNN-LIB property: sat, unsat, timeout or unknown.

#include "commands.h"
#include "tessera/core/error.h"

namespace tessera::app {

void add_verify_command(CLI::App& app, CommandBody& body) {
  CLI::App* cmd = app.add_subcommand("verify", "decide a VNN-LIB property: sat, unsat, timeout or unknown");
  cmd->allow_extras();
  cmd->callback([&body] {
    body = []() -> int {
      TESSERA_THROW(Unsupported, "'tessera verify' is not implemented in this version yet");
    };
  });
}

}  // namespace tessera::app
