#pragma once
/// @file watchdog.h
/// A process's answer given exactly once: by the run when it finishes, or by a watchdog
/// thread when the run overruns its time (a pass that does not look at the clock, a
/// machine under load). The watchdog gives its own answer and ends the process with exit
/// code 0, so a time limit is honoured whatever the run is doing (`tessera verify`).
///
/// @code
///   AnswerWatchdog wd(seconds_left + 0.5, [] { std::cout << "timeout" << std::endl; });
///   VerifyResult r = verify(...);
///   wd.claim();                 // from here on only the run answers
///   print(r);
/// @endcode

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace tessera::core {

/// Seconds since this process started (from /proc: includes loading the libraries, which
/// takes ~1 s before main), or 0 where /proc cannot be read.
double seconds_since_process_start();

class AnswerWatchdog {
 public:
  /// After `seconds`, unless claimed: runs `answer_timeout` and exits the process with code 0.
  AnswerWatchdog(double seconds, std::function<void()> answer_timeout);
  ~AnswerWatchdog();
  AnswerWatchdog(const AnswerWatchdog&) = delete;
  AnswerWatchdog& operator=(const AnswerWatchdog&) = delete;

  /// The run takes the right to answer. When the watchdog took it first, this does not
  /// return: the watchdog is ending the process.
  void claim();

 private:
  void watch(double seconds);

  std::function<void()> answer_timeout_;
  std::atomic<bool> answered_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tessera::core
