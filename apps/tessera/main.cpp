// `tessera`: the command-line tool. Parses global options, sets up threads, memory
// ledger and communicator, and runs one subcommand under the distributed guard.

#include <cstdlib>
#include <iostream>
#include <string>

#include "cli_checks.h"
#include "commands.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/core/threads.h"
#include "tessera/core/version.h"
#include "tessera/dist/communicator.h"
#include "tessera/dist/guard.h"

namespace {

// The first word of the command line that is neither an option nor a global option's
// value: the subcommand the user meant ("" when there is none).
std::string first_command_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads" || arg == "--memory-cap") { ++i; continue; }
    if (!arg.empty() && arg[0] == '-') continue;
    return arg;
  }
  return "";
}

}  // namespace

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
        ->check(tessera::app::kNonNegative);
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
      // --help and --version end here with 0. Every other command-line mistake is bad
      // input: one line naming the option and the rule, exit code 2. Only rank 0 prints.
      bool is_error = e.get_exit_code() != static_cast<int>(CLI::ExitCodes::Success);
      if (tessera::dist::world()->rank() != 0) return is_error ? tessera::dist::kExitInputError : 0;
      if (!is_error) return app.exit(e);
      const std::string word = first_command_word(argc, argv);
      if (!word.empty() && app.get_subcommands([&](CLI::App* s) { return s->check_name(word); }).empty()) {
        std::cerr << "tessera: error: unknown command '" << word
                  << "' (commands: info, solve, bounds, verify, bench; see tessera --help)" << std::endl;
      } else {
        std::cerr << "tessera: error: " << e.what() << " (see tessera --help)" << std::endl;
      }
      return tessera::dist::kExitInputError;
    }
    tessera::core::MemoryLedger::install();
    if (!memory_cap.empty()) {
      tessera::core::MemoryLedger::set_cap(tessera::core::parse_byte_size(memory_cap));
    }
    tessera::core::setup_threads(threads);
    return body();
  });
}
