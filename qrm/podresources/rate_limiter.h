// TokenBucket: the pod-resources service's rate limit (the kubelet's defaults: 100 requests
// per second, bursts of 10), so a misbehaving monitoring agent cannot keep the host busy.
#pragma once

#include <chrono>
#include <mutex>

#include "common/mutex.h"

namespace qrm::podresources {

class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;

  // qps <= 0 disables the limit.
  TokenBucket(double qps, int burst);

  // Takes one token if available.
  bool TryAcquire() { return TryAcquire(Clock::now()); }
  bool TryAcquire(Clock::time_point now);  // for tests: an explicit clock

 private:
  const double qps_;
  const double burst_;
  Mutex mu_;
  double tokens_ QRM_GUARDED_BY(mu_);
  Clock::time_point last_ QRM_GUARDED_BY(mu_);
  bool started_ QRM_GUARDED_BY(mu_) = false;
};

}  // namespace qrm::podresources
