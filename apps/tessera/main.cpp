// `tessera`: the command-line tool. Parses global options, sets up threads, memory
// ledger and communicator, and runs one subcommand under the distributed guard.

#include <cstdlib>
#include <iostream>

#include "command_line.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/core/threads.h"
#include "tessera/dist/communicator.h"
#include "tessera/dist/guard.h"

int main(int argc, char** argv) {
  setenv("GLOG_minloglevel", "2", /*overwrite=*/0);  // silence torch's log noise
  return tessera::dist::run_guarded([&]() -> int {
    tessera::app::ParsedCommandLine cli = tessera::app::parse_command_line(argc, argv);
    if (!cli.body) {
      // --help, --version or a mistake: only rank 0 prints
      if (tessera::dist::world()->rank() == 0) {
        std::cout << cli.out << std::flush;
        std::cerr << cli.err << std::flush;
      }
      return cli.exit_code;
    }
    tessera::core::MemoryLedger::install();
    if (!cli.global.memory_cap.empty()) {
      tessera::core::MemoryLedger::set_cap(tessera::core::parse_byte_size(cli.global.memory_cap));
    }
    tessera::core::setup_threads(cli.global.threads);
    return cli.body();
  });
}
