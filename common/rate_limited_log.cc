#include "common/rate_limited_log.h"

namespace qrm {

std::string CapText(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  return fmt::format("{}...({} bytes)", text.substr(0, max_bytes), text.size());
}

RateLimitedLog::RateLimitedLog(std::shared_ptr<spdlog::logger> log, std::string what, int burst,
                               std::chrono::milliseconds interval)
    : log_(std::move(log)), what_(std::move(what)), burst_(burst), interval_(interval) {}

RateLimitedLog::~RateLimitedLog() {
  MutexLock lock(mu_);
  ReportSuppressed();
}

uint64_t RateLimitedLog::suppressed_total() const {
  MutexLock lock(mu_);
  return suppressed_total_;
}

bool RateLimitedLog::Admit() {
  MutexLock lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (in_window_ == 0 || now - window_start_ >= interval_) {
    ReportSuppressed();
    window_start_ = now;
    in_window_ = 0;
  }
  if (in_window_ < burst_) {
    ++in_window_;
    return true;
  }
  ++suppressed_;
  ++suppressed_total_;
  return false;
}

void RateLimitedLog::ReportSuppressed() {
  if (suppressed_ == 0) return;
  log_->warn("suppressed {} more {} (at most {} lines per {} ms are logged; metrics count all)",
             suppressed_, what_, burst_, interval_.count());
  suppressed_ = 0;
}

}  // namespace qrm
