// AnswerWatchdog: a run that overruns is answered by the watchdog, which ends the process
// with exit code 0; a run that claims in time answers itself. The process clock counts.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "tessera/core/watchdog.h"

namespace tessera::core {
namespace {

TEST(Watchdog, ProcessClockCountsSinceStart) {
  double a = seconds_since_process_start();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  double b = seconds_since_process_start();
  EXPECT_GT(a, 0.0);
  EXPECT_GE(b, a);    // /proc's clock has 10 ms ticks
  EXPECT_LT(a, 3600.0);
}

// A stuck run (it never looks at the clock): the watchdog answers and exits with code 0.
void stuck_run() {
  AnswerWatchdog wd(0.2, [] { std::fprintf(stderr, "answer: timeout\n"); });
  std::this_thread::sleep_for(std::chrono::seconds(60));
  wd.claim();
  std::fprintf(stderr, "answer: the run\n");
  std::exit(7);
}

TEST(WatchdogDeathTest, AnswersForAStuckRunAndExitsZero) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(stuck_run(), ::testing::ExitedWithCode(0), "answer: timeout");
}

TEST(Watchdog, RunThatClaimsInTimeAnswersItself) {
  int answered = 0;
  {
    AnswerWatchdog wd(30.0, [&] { ++answered; });
    wd.claim();
  }  // the destructor stops the thread long before its 30 s
  EXPECT_EQ(answered, 0);
}

}  // namespace
}  // namespace tessera::core
