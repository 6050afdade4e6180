// The command-line fuzz corpus (fuzz/corpus/cli, fuzz/regressions/cli; `make fuzz`) and
// seeded mutations of it (tests/fuzz_smoke.h) through the normal build's parser, and the
// answers the tool gives to a few command lines: a command to run, --help/--version, or exit
// code 2 with one line.

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli_input.h"
#include "command_line.h"
#include "fuzz_smoke.h"

namespace tessera::app {
namespace {

ParsedCommandLine parse(std::vector<const char*> words) {
  words.insert(words.begin(), "tessera");
  return parse_command_line(static_cast<int>(words.size()), words.data());
}

TEST(CliFuzz, CorpusAndMutationsGiveCleanAnswersOnly) {
  const int n = test::fuzz_smoke("cli", 10, [](const std::string& bytes, const std::string& name) {
    const auto words = fuzz::cli_words(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    EXPECT_EQ(fuzz::cli_problem(words), "") << name;
  });
  EXPECT_GE(n, 6000);
}

TEST(CliFuzz, WordsSplitAtWhitespaceOrAtNul) {
  const std::string spaces = " solve\t--poisson2d  4\n";
  EXPECT_EQ(fuzz::cli_words(reinterpret_cast<const uint8_t*>(spaces.data()), spaces.size()),
            (std::vector<std::string>{"solve", "--poisson2d", "4"}));
  const std::string nul("bounds\0a b.onnx\0\0", 17);
  EXPECT_EQ(fuzz::cli_words(reinterpret_cast<const uint8_t*>(nul.data()), nul.size()),
            (std::vector<std::string>{"bounds", "a b.onnx", ""}));
}

TEST(CliFuzz, ValidCommandLineGivesABodyAndGlobalOptions) {
  ParsedCommandLine cli = parse({"--threads", "3", "--memory-cap", "2G", "solve", "--poisson2d", "4"});
  EXPECT_TRUE(cli.body);
  EXPECT_EQ(cli.global.threads, 3);
  EXPECT_EQ(cli.global.memory_cap, "2G");
  EXPECT_EQ(cli.out + cli.err, "");
}

TEST(CliFuzz, HelpAndVersionExitZeroWithText) {
  for (auto words : {std::vector<const char*>{"--help"}, {"--version"}, {"solve", "--help"}, {"bench", "cg", "-h"}}) {
    ParsedCommandLine cli = parse(words);
    EXPECT_FALSE(cli.body) << words[0];
    EXPECT_EQ(cli.exit_code, 0) << words[0];
    EXPECT_FALSE(cli.out.empty()) << words[0];
    EXPECT_EQ(cli.err, "") << words[0];
  }
}

TEST(CliFuzz, MistakesExitTwoWithOneLineNamingTheProblem) {
  struct Case {
    std::vector<const char*> words;
    std::string expect;
  };
  const std::vector<Case> cases{
      {{}, "A subcommand is required"},
      {{"no-such-command"}, "unknown command 'no-such-command'"},
      {{"solve", "--poisson2d", "0"}, "must be a positive number, got 0"},
      {{"solve", "--rtol", "abc"}, "--rtol"},
      {{"--threads", "-1", "info"}, "--threads"},
      {{"bench"}, "A subcommand is required"},
      {{"solve", "--poisson2d", "4", "--poisson3d", "4"}, "excludes"},
  };
  for (const auto& c : cases) {
    ParsedCommandLine cli = parse(c.words);
    EXPECT_FALSE(cli.body) << c.expect;
    EXPECT_EQ(cli.exit_code, 2) << c.expect;
    EXPECT_EQ(cli.out, "") << c.expect;
    EXPECT_EQ(cli.err.rfind("tessera: error: ", 0), 0u) << cli.err;
    EXPECT_EQ(cli.err.find('\n'), cli.err.size() - 1) << cli.err;
    EXPECT_NE(cli.err.find(c.expect), std::string::npos) << cli.err;
  }
}

// The unknown-command message lists every subcommand that --help lists.
TEST(CliFuzz, UnknownCommandListsEveryCommand) {
  const std::string help = parse({"--help"}).out;
  const std::string err = parse({"no-such-command"}).err;
  const std::size_t from = err.find("(commands: ") + 11, to = err.find(';', from);
  ASSERT_NE(to, std::string::npos) << err;
  const std::string listed = ", " + err.substr(from, to - from) + ",";
  std::istringstream lines(help.substr(help.find("Subcommands:")));
  std::string line, name;
  std::getline(lines, line);
  int n = 0;
  while (std::getline(lines, line) && std::istringstream(line) >> name) {
    ++n;
    EXPECT_NE(listed.find(", " + name + ","), std::string::npos) << name << " missing from: " << err;
  }
  EXPECT_GE(n, 7) << help;
}

}  // namespace
}  // namespace tessera::app
