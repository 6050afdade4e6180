// The watchdog's prepared timeout answer (apps/tessera/timeout_answer.h): the files and the
// verdict line it writes say what a finished run's answer would say.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "timeout_answer.h"

namespace tessera::app {
namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(TimeoutAnswer, WritesTheResultsFileTheJsonAndTheVerdictLine) {
  const auto dir = std::filesystem::temp_directory_path() / ("tessera_timeout_answer_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const nlohmann::json prepared{{"verdict", "timeout"}, {"reason", "over \"3\" s"}, {"domains_visited", 0},
                                {"seconds", 0.0}, {"ranks", 2}, {"peak_bytes", nlohmann::json::array()}};
  TimeoutAnswer answer({(dir / "results.txt").string(), (dir / "run.json").string(), true}, "timeout\n", prepared,
                       "over 3 s");
  testing::internal::CaptureStdout();
  answer.give(1234);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "timeout\n");
  EXPECT_EQ(read(dir / "results.txt"), "timeout\n");
  nlohmann::json j = nlohmann::json::parse(read(dir / "run.json"));  // valid JSON, every member once
  EXPECT_EQ(j.size(), prepared.size());
  EXPECT_EQ(j["verdict"], "timeout");
  EXPECT_EQ(j["reason"], "over \"3\" s");
  EXPECT_EQ(j["domains_visited"], 1234);
  EXPECT_GT(j["seconds"].get<double>(), 0.0);  // since the process start
  EXPECT_EQ(j["ranks"], 2);
  EXPECT_TRUE(j["peak_bytes"].empty());
  std::filesystem::remove_all(dir);
}

TEST(TimeoutAnswer, AnUnwritableFileIsReportedAndTheVerdictStillGiven) {
  TimeoutAnswer answer({"", "/nonexistent-dir/run.json", false}, "timeout\n", nlohmann::json{{"verdict", "timeout"}},
                       "over 3 s");
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  answer.give(0);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "timeout\n");
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("cannot write '/nonexistent-dir/run.json'"), std::string::npos) << err;
  EXPECT_NE(err.find("timeout: over 3 s"), std::string::npos) << err;
}

}  // namespace
}  // namespace tessera::app
