// `tessera`: the command-line tool. Parses global options, sets up threads, memory
// ledger and communicator, and runs one subcommand under the distributed guard.
//
// It ends with std::_Exit once its output is flushed and MPI finalised (run_guarded): the
// exit handlers would only undo what LibTorch's static initialisers registered (thousands
// of operator kernels, deregistered one by one): ~8% of the CPU of an ACAS Xu instance
// decided at once, for nothing (bench/startup.py; history/2026-12-02-verify-startup.md).
// Every file a subcommand writes is closed when it returns.

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "command_line.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/core/threads.h"
#include "tessera/dist/communicator.h"
#include "tessera/dist/guard.h"

int main(int argc, char** argv) {
  setenv("GLOG_minloglevel", "2", /*overwrite=*/0);  // silence torch's log noise
  const int code = tessera::dist::run_guarded([&]() -> int {
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
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
#if defined(__SANITIZE_ADDRESS__)
  return code;  // the sanitizer build keeps the exit handlers: LeakSanitizer's check runs in one
#else
  std::_Exit(code);
#endif
}
