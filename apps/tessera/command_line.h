#pragma once
// The command line of `tessera`: the global options and every subcommand on one CLI::App,
// parsed into the body to run or the exit code to end with. Parsing runs no command, so
// main and the command-line fuzz target (fuzz/fuzz_cli.cpp) share it.

#include <string>

#include "commands.h"

namespace tessera::app {

/// Options before the subcommand, applied by main before the body runs.
struct GlobalOptions {
  int threads = 0;         ///< --threads (0: the default)
  std::string memory_cap;  ///< --memory-cap as written ("" for none), e.g. "500M"
};

/// What parsing argv gives: a body to run, or an exit code with what to print.
struct ParsedCommandLine {
  GlobalOptions global;
  CommandBody body;    ///< the chosen subcommand; empty when parsing ends the run
  int exit_code = 0;   ///< when body is empty: 0 after --help/--version, kExitInputError for a mistake
  std::string out;     ///< --help or --version text, for standard output
  std::string err;     ///< a mistake: one line naming the option and the rule, for standard error
  bool server = false; ///< `serve`: the body runs without the memory ledger and thread set-up
};

/// Parses the command line (argv[0] is the program name). Never throws for bad input: a
/// mistake is exit code 2 with one line in `err`.
ParsedCommandLine parse_command_line(int argc, const char* const* argv);

/// Parses and runs one command line as `tessera-main` does (under the distributed guard:
/// errors become their exit codes) and gives its exit code. Flushing and ending the process
/// are the caller's: main, or a command process forked by `tessera serve`.
int run_command_line(int argc, char** argv);

}  // namespace tessera::app
