// RateLimitedLog: keeps a flood of one kind of log line from filling the log.
//
// A hostile or broken client can trigger a refusal thousands of times a second (3,000
// refused connections took 0.19 s). The first `burst` lines of each `interval` are written;
// the rest are only counted, and one "suppressed N" line reports them when the next line is
// let through or the limiter goes away. Metrics still count every event: only lines are
// limited. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <spdlog/logger.h>

#include "common/mutex.h"

namespace qrm {

// `text` itself if at most `max_bytes` long, else its first max_bytes bytes and
// "...(N bytes)": for log lines and messages that may embed what a client sent.
std::string CapText(std::string_view text, size_t max_bytes);

class RateLimitedLog {
 public:
  // `what` names the kind of line in the "suppressed" report ("refused connections").
  RateLimitedLog(std::shared_ptr<spdlog::logger> log, std::string what, int burst = 20,
                 std::chrono::milliseconds interval = std::chrono::seconds(10));
  ~RateLimitedLog();
  RateLimitedLog(const RateLimitedLog&) = delete;
  RateLimitedLog& operator=(const RateLimitedLog&) = delete;

  // Formats and writes the line only when it is let through (a suppressed line costs no
  // formatting).
  template <typename... Args>
  void Log(spdlog::level::level_enum level, fmt::format_string<Args...> format, Args&&... args) {
    if (!Admit()) return;
    log_->log(level, "{}", fmt::format(format, std::forward<Args>(args)...));
  }

  uint64_t suppressed_total() const;

 private:
  bool Admit();
  void ReportSuppressed() QRM_REQUIRES(mu_);

  const std::shared_ptr<spdlog::logger> log_;
  const std::string what_;
  const int burst_;
  const std::chrono::milliseconds interval_;
  mutable Mutex mu_;
  std::chrono::steady_clock::time_point window_start_ QRM_GUARDED_BY(mu_){};
  int in_window_ QRM_GUARDED_BY(mu_) = 0;
  uint64_t suppressed_ QRM_GUARDED_BY(mu_) = 0;        // since the last report
  uint64_t suppressed_total_ QRM_GUARDED_BY(mu_) = 0;  // since construction
};

}  // namespace qrm
