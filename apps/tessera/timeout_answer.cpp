// TimeoutAnswer: see timeout_answer.h.

#include "timeout_answer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "tessera/core/watchdog.h"

namespace tessera::app {
namespace {

void write_all(int fd, const char* text, size_t n) noexcept {
  while (n > 0) {
    ssize_t w = ::write(fd, text, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    text += w;
    n -= static_cast<size_t>(w);
  }
}

void write_text(int fd, const char* text) noexcept { write_all(fd, text, std::strlen(text)); }

void cannot_write(const std::string& path) noexcept {
  write_text(2, "error: cannot write '");
  write_text(2, path.c_str());
  write_text(2, "'\n");
}

}  // namespace

TimeoutAnswer::TimeoutAnswer(TimeoutAnswerFiles files, std::string results, const nlohmann::json& json,
                             std::string reason)
    : files_(std::move(files)),
      results_(std::move(results)),
      reason_(std::move(reason)),
      started_(core::seconds_since_process_start()),
      made_(std::chrono::steady_clock::now()) {
  nlohmann::json rest = json;
  rest.erase("domains_visited");
  rest.erase("seconds");
  const std::string members = rest.dump().substr(1);  // without the opening brace: give() writes it
  json_rest_ = (members == "}" ? "" : ",") + members + "\n";
}

void TimeoutAnswer::give(int64_t domains_visited) const noexcept {
  const double seconds = started_ + std::chrono::duration<double>(std::chrono::steady_clock::now() - made_).count();
  if (!files_.results.empty()) {
    int fd = ::open(files_.results.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) cannot_write(files_.results);
    else write_all(fd, results_.data(), results_.size()), ::close(fd);
  }
  if (!files_.json.empty()) {
    int fd = ::open(files_.json.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      cannot_write(files_.json);
    } else {
      char head[96];
      int n = std::snprintf(head, sizeof head, "{\"domains_visited\":%lld,\"seconds\":%.6f",
                            static_cast<long long>(domains_visited), seconds);
      write_all(fd, head, static_cast<size_t>(n));
      write_all(fd, json_rest_.data(), json_rest_.size());
      ::close(fd);
    }
  }
  if (!files_.quiet) {
    char head[32];
    int n = std::snprintf(head, sizeof head, "[%7.1f s] timeout: ", seconds);
    write_all(2, head, static_cast<size_t>(n));
    write_all(2, reason_.data(), reason_.size());
    write_text(2, "\n");
  }
  write_all(1, results_.data(), results_.find('\n') + 1);  // the verdict line
}

}  // namespace tessera::app
