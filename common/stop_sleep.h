// A sleep a std::stop_token cuts short, for retry loops that must end at once on a stop.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stop_token>

namespace qrm {

// Sleeps `delay` unless the stop comes first; false when it did.
inline bool SleepUnlessStopped(const std::stop_token& stop, std::chrono::milliseconds delay) {
  std::mutex mu;  // guards nothing: the wait needs one
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  cv.wait_for(lock, stop, delay, [] { return false; });
  return !stop.stop_requested();
}

}  // namespace qrm
