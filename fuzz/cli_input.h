#pragma once
// Input bytes as a `tessera` command line, and the rule a clean answer to it follows.
// Shared by the command-line fuzz target (fuzz_cli.cpp) and the test that replays its
// corpus (tests/apps/cli_fuzz_test.cpp).

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "command_line.h"
#include "tessera/core/error.h"
#include "tessera/core/memory_ledger.h"

namespace tessera::fuzz {

/// The words after the program name. Input holding a NUL byte is split at NUL and newline
/// (words may hold spaces; empty words are kept); other input at spaces, tabs and line ends
/// (empty words dropped).
inline std::vector<std::string> cli_words(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const bool nul_split = text.find('\0') != std::string::npos;
  const std::string separators = nul_split ? std::string("\0\n", 2) : std::string(" \t\n\r\v\f");
  std::vector<std::string> words;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find_first_of(separators, start);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(start, end - start);
    if (nul_split ? end < text.size() || !word.empty() : !word.empty()) words.push_back(std::move(word));
    start = end + 1;
  }
  return words;
}

/// Parses `tessera WORDS...` as the tool does, runs no command, and says what is wrong
/// with the answer ("" when it is clean):
///  - a command to run: a body, a non-negative --threads, and a --memory-cap that is a byte
///    size or a tessera::Error (what main does with it);
///  - --help or --version: exit code 0, text on standard output, nothing on standard error;
///  - a mistake: exit code 2, one line "tessera: error: ..." on standard error, nothing on
///    standard output.
/// An exception out of the parse is a problem too.
inline std::string cli_problem(const std::vector<std::string>& words) {
  std::vector<const char*> argv{"tessera"};
  for (const auto& w : words) argv.push_back(w.c_str());
  try {
    const app::ParsedCommandLine cli = app::parse_command_line(static_cast<int>(argv.size()), argv.data());
    if (cli.body) {
      if (cli.global.threads < 0) return "negative --threads accepted";
      if (!cli.global.memory_cap.empty()) {
        try {
          core::parse_byte_size(cli.global.memory_cap);
        } catch (const Error&) {
        }
      }
      return cli.out.empty() && cli.err.empty() ? "" : "a command to run, with a message";
    }
    if (cli.exit_code == 0) return !cli.out.empty() && cli.err.empty() ? "" : "help or version without text";
    if (cli.exit_code != 2) return "exit code " + std::to_string(cli.exit_code);
    if (!cli.out.empty()) return "a mistake with standard output";
    const std::string prefix = "tessera: error: ";
    if (cli.err.compare(0, prefix.size(), prefix) != 0) return "message without '" + prefix + "': " + cli.err;
    if (cli.err.find('\n') != cli.err.size() - 1) return "message not one line: " + cli.err;
    return "";
  } catch (const std::exception& e) {
    return std::string("exception out of the parse: ") + e.what();
  }
}

}  // namespace tessera::fuzz
