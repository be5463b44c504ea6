#include "advisor/sample/cpu_rate.h"

namespace qrm::advisor {

std::optional<double> CpuRate::Update(uint64_t usage_ns, int64_t time_ns) {
  std::optional<double> cores;
  if (has_last_ && time_ns > last_time_) {
    if (usage_ns >= last_usage_) {
      cores =
          static_cast<double>(usage_ns - last_usage_) / static_cast<double>(time_ns - last_time_);
    } else {
      ++resets_;
    }
  }
  if (!has_last_ || time_ns > last_time_) {
    last_usage_ = usage_ns;
    last_time_ = time_ns;
    has_last_ = true;
  }
  return cores;
}

}  // namespace qrm::advisor
