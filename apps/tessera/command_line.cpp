// `tessera`'s command line: global options, the subcommands, and one message and exit code
// for every command-line mistake.

#include "command_line.h"

#include <sstream>

#include "cli_checks.h"
#include "tessera/core/version.h"
#include "tessera/dist/guard.h"

namespace tessera::app {
namespace {

// The first word of the command line that is neither an option nor a global option's
// value: the subcommand the user meant ("" when there is none).
std::string first_command_word(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads" || arg == "--memory-cap") { ++i; continue; }
    if (!arg.empty() && arg[0] == '-') continue;
    return arg;
  }
  return "";
}

// "info, solve, ...": the names of `app`'s subcommands, in the order they were added.
std::string command_names(CLI::App& app) {
  std::string names;
  for (const CLI::App* s : app.get_subcommands([](CLI::App*) { return true; }))
    names += (names.empty() ? "" : ", ") + s->get_name();
  return names;
}

// Global options and subcommands on `app`; the options write into `global`, the chosen
// subcommand's callback into `body`.
void add_command_line(CLI::App& app, GlobalOptions& global, CommandBody& body, bool& server) {
  app.set_version_flag("--version", tessera::core::version());
  app.require_subcommand(1);
  app.add_option("--threads", global.threads,
                 "intra-op threads (default: TESSERA_THREADS, 1 per rank under MPI, else all)")
      ->check(kNonNegative);
  app.add_option("--memory-cap", global.memory_cap,
                 "cap on this process's (under MPI: each rank's) CPU tensor bytes, e.g. 500M or "
                 "2G (powers of 1024); an allocation above it ends the run with exit code 5");
  add_info_command(app, body);
  add_solve_command(app, body);
  add_spectral_commands(app, body);
  add_bounds_command(app, body);
  add_verify_command(app, body);
  add_bench_command(app, body);
  add_serve_command(app, body, server);
}

}  // namespace

ParsedCommandLine parse_command_line(int argc, const char* const* argv) {
  ParsedCommandLine parsed;
  CLI::App app{"tessera: sharded, differentiable numerics on LibTorch\n"
               "  sparse solves with gradients (solve) and neural-network verification "
               "(bounds, verify)"};
  add_command_line(app, parsed.global, parsed.body, parsed.server);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    parsed.body = nullptr;
    // --help and --version end here with 0. Every other command-line mistake is bad
    // input: one line naming the option and the rule, exit code 2.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      std::ostringstream out, err;
      parsed.exit_code = app.exit(e, out, err);
      parsed.out = out.str();
      return parsed;
    }
    const std::string word = first_command_word(argc, argv);
    if (!word.empty() && app.get_subcommands([&](CLI::App* s) { return s->check_name(word); }).empty()) {
      parsed.err = "tessera: error: unknown command '" + word +
                   "' (commands: " + command_names(app) + "; see tessera --help)\n";
    } else {
      parsed.err = std::string("tessera: error: ") + e.what() + " (see tessera --help)\n";
    }
    parsed.exit_code = dist::kExitInputError;
  }
  return parsed;
}

}  // namespace tessera::app
