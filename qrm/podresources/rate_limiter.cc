#include "qrm/podresources/rate_limiter.h"

#include <algorithm>

namespace qrm::podresources {

TokenBucket::TokenBucket(double qps, int burst)
    : qps_(qps), burst_(std::max(1, burst)), tokens_(std::max(1, burst)) {}

bool TokenBucket::TryAcquire(Clock::time_point now) {
  if (qps_ <= 0) return true;
  MutexLock lock(mu_);
  if (started_ && now > last_) {
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
  }
  if (!started_ || now > last_) last_ = now;
  started_ = true;
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

}  // namespace qrm::podresources
