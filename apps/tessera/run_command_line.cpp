// One command line run as `tessera-main` runs it: parse, then the global options (memory
// ledger and cap, threads), then the subcommand, under the distributed guard.

#include <iostream>

#include "command_line.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/core/threads.h"
#include "tessera/dist/communicator.h"
#include "tessera/dist/guard.h"

namespace tessera::app {

int run_command_line(int argc, char** argv) {
  return dist::run_guarded([&]() -> int {
    ParsedCommandLine cli = parse_command_line(argc, argv);
    if (!cli.body) {
      // --help, --version or a mistake: only rank 0 prints
      if (dist::world()->rank() == 0) {
        std::cout << cli.out << std::flush;
        std::cerr << cli.err << std::flush;
      }
      return cli.exit_code;
    }
    // the server stays as loaded: its commands set up their own ledger and threads
    if (cli.server) return cli.body();
    core::MemoryLedger::install();
    if (!cli.global.memory_cap.empty()) core::MemoryLedger::set_cap(core::parse_byte_size(cli.global.memory_cap));
    core::setup_threads(cli.global.threads);
    return cli.body();
  });
}

}  // namespace tessera::app
