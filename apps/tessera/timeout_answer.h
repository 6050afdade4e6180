#pragma once
// The answer `tessera verify` gives when its watchdog ends a run that overran its timeout,
// prepared before the run starts so that giving it takes no heap memory, no lock and no
// library state: the texts are ready, the numbers go through snprintf into fixed buffers and
// everything out through write(2). A process whose main thread is stuck (in a collective
// that never returns) or whose heap is in a bad state can still answer.

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace tessera::app {

struct TimeoutAnswerFiles {
  std::string results;  ///< VNN-COMP results file ("" for none)
  std::string json;     ///< --json file ("" for none)
  bool quiet = false;   ///< no summary line on standard error
};

class TimeoutAnswer {
 public:
  /// `results` is the results file's text (its first line the verdict, also standard
  /// output's last line); `json` the run's JSON answer, whose `domains_visited` and `seconds`
  /// are filled in when it is given; `reason` the summary line's text.
  TimeoutAnswer(TimeoutAnswerFiles files, std::string results, const nlohmann::json& json, std::string reason);

  /// Writes the results file, the JSON file, the summary on standard error and `timeout` as
  /// the last line of standard output. Never allocates; errors go to standard error.
  void give(int64_t domains_visited) const noexcept;

 private:
  TimeoutAnswerFiles files_;
  std::string results_;
  std::string json_rest_;  ///< the JSON object's members after `domains_visited` and `seconds`
  std::string reason_;
  double started_;  ///< seconds since the process start when this was made
  std::chrono::steady_clock::time_point made_;
};

}  // namespace tessera::app
