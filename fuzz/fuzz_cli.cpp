// libFuzzer target: `tessera`'s command line (app::parse_command_line). The input is split
// into words (fuzz/cli_input.h); the line is parsed as the tool parses it, and no command
// runs. Every answer must be a command to run, --help/--version, or exit code 2 with one
// line; anything else aborts with the words and the problem.
#include <cstdio>
#include <cstdlib>

#include "cli_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<std::string> words = tessera::fuzz::cli_words(data, size);
  const std::string problem = tessera::fuzz::cli_problem(words);
  if (!problem.empty()) {
    std::fprintf(stderr, "tessera");
    for (const auto& w : words) std::fprintf(stderr, " [%s]", w.c_str());
    std::fprintf(stderr, "\n%s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
