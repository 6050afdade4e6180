// `tessera`: the command-line tool. Parses global options, sets up threads, memory
// ledger and communicator, and runs one subcommand under the distributed guard.

#include <cstdlib>
#include <string>

#include "commands.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/core/threads.h"
#include "tessera/core/version.h"
#include "tessera/dist/communicator.h"
#include "tessera/dist/guard.h"

int main(int argc, char** argv) {
  setenv("GLOG_minloglevel", "2", /*overwrite=*/0);  // silence torch's log noise
  return tessera::dist::run_guarded([&]() -> int {
    CLI::App app{"tessera: sharded, differentiable numerics on LibTorch\n"
                 "  sparse solves with gradients (solve) and neural-network verification "
                 "(bounds, verify)"};
    app.set_version_flag("--version", tessera::core::version());
    app.require_subcommand(1);
    int threads = 0;
    app.add_option("--threads", threads,
                   "intra-op threads (default: TESSERA_THREADS, 1 per rank under MPI, else all)")
        ->check(CLI::NonNegativeNumber);
    std::string memory_cap;
    app.add_option("--memory-cap", memory_cap,
                   "cap on this process's (under MPI: each rank's) CPU tensor bytes, e.g. 500M or "
                   "2G (powers of 1024); an allocation above it ends the run with exit code 5");

    tessera::app::CommandBody body;
    tessera::app::add_info_command(app, body);
    tessera::app::add_solve_command(app, body);
    tessera::app::add_bounds_command(app, body);
    tessera::app::add_verify_command(app, body);
    tessera::app::add_bench_command(app, body);

    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      // Only rank 0 prints help and usage errors.
      if (tessera::dist::world()->rank() == 0) return app.exit(e);
      return e.get_exit_code();
    }
    tessera::core::MemoryLedger::install();
    if (!memory_cap.empty()) {
      tessera::core::MemoryLedger::set_cap(tessera::core::parse_byte_size(memory_cap));
    }
    tessera::core::setup_threads(threads);
    return body();
  });
}
