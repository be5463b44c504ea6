// Turns a cumulative CPU-time counter into cores used between two readings, safely: the
// first reading, a counter that went back (a cgroup recreated under the same path, a reset)
// and a clock that did not advance give no value, never a negative or absurd one. Resets are
// counted so the daemon can export them.
#pragma once

#include <cstdint>
#include <optional>

namespace qrm::advisor {

class CpuRate {
 public:
  // `usage_ns` cumulative CPU time; `time_ns` a monotonic clock. Cores used since the last
  // call, or nullopt (see above).
  std::optional<double> Update(uint64_t usage_ns, int64_t time_ns);
  uint64_t resets() const { return resets_; }

 private:
  bool has_last_ = false;
  uint64_t last_usage_ = 0;
  int64_t last_time_ = 0;
  uint64_t resets_ = 0;
};

}  // namespace qrm::advisor
