// AnswerWatchdog and the process clock: see watchdog.h.

#include "tessera/core/watchdog.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace tessera::core {

double seconds_since_process_start() {
  // /proc/self/stat field 22: start time in clock ticks after boot; /proc/uptime: seconds
  // after boot. The command name (field 2) is in parentheses and may hold spaces.
  std::ifstream stat("/proc/self/stat"), uptime("/proc/uptime");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  double up = 0;
  if (!(uptime >> up)) return 0;
  size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));  // from field 3 on
  std::string field;
  for (int i = 3; i < 22 && fields >> field; ++i) {
  }
  unsigned long long ticks = 0;
  if (!(fields >> ticks)) return 0;
  double started = static_cast<double>(ticks) / static_cast<double>(sysconf(_SC_CLK_TCK));
  return up > started ? up - started : 0;
}

AnswerWatchdog::AnswerWatchdog(double seconds, std::function<void()> answer_timeout)
    : answer_timeout_(std::move(answer_timeout)), thread_([this, seconds] { watch(seconds); }) {}

AnswerWatchdog::~AnswerWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void AnswerWatchdog::claim() {
  if (!answered_.exchange(true)) return;
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));  // the watchdog is ending the process
}

void AnswerWatchdog::watch(double seconds) {
  auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6));
  std::unique_lock<std::mutex> lock(mutex_);
  if (wake_.wait_until(lock, until, [this] { return stopping_; })) return;  // the run finished in time
  if (answered_.exchange(true)) return;                                      // the run is answering
  answer_timeout_();
  std::cout.flush();
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(0);
}

}  // namespace tessera::core
