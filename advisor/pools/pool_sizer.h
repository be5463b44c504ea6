// PoolSizer: turns the predicted need of the shared pool into the next size of the CPU
// plugin's shared pool, within ramp limits, the way Katalyst's sysadvisor regulator moves its
// regions (../shared/reference/colocation.md): grow fast (at most `max_grow` CPUs per
// decision, no wait), shrink slowly (at most `max_shrink` CPUs per decision and only when
// `shrink_interval_s` passed since the last change), never below the configured minimums.
//
// The reclaimed pool is what the shared pool leaves of the CPUs neither reserved nor
// dedicated, so sizing one sizes both. Growth is not delayed because a shared pool that is
// too small throttles latency-sensitive work at once; a pool that is too big only lends less
// to batch work for a while.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"

namespace qrm::advisor {

struct PoolSizerOptions {
  int min_shared_cpus = 4;     // Katalyst's minimum for a share region
  int min_reclaimed_cpus = 4;  // Katalyst's reserved-for-reclaim
  int max_grow = 10;           // CPUs per decision
  int max_shrink = 2;          // CPUs per decision
  int64_t shrink_interval_s = 30;
  // kInvalidArgument naming the field and value: minimums >= 0, steps >= 1, interval >= 0.
  Status Validate() const;
};

struct PoolInputs {
  int free_cpus = 0;      // CPUs neither reserved nor dedicated (> 0)
  double need_cores = 0;  // what the shared pool should hold (prediction + margin)
  int64_t now = 0;        // seconds
};

struct PoolDecision {
  int shared = 0;     // the shared pool's new size
  int reclaimed = 0;  // free_cpus - shared
  int target = 0;     // the size the need asks for (after the minimums)
  // "grow", "shrink", "hold" (a shrink waits for the interval), "steady", "clamp" (the
  // previous size no longer fits the free CPUs) or "initial".
  std::string reason;
  bool changed = false;  // shared differs from the previous decision
};

class PoolSizer {
 public:
  explicit PoolSizer(const PoolSizerOptions& options) : options_(options) {}

  // The shared pool size in force now (the control file's, or what the allocations show);
  // nullopt: unknown, and the sizer assumes every free CPU is shared (the safe side for
  // latency-sensitive work) and shrinks from there.
  void SetCurrent(std::optional<int> shared) { current_ = shared; }
  std::optional<int> current() const { return current_; }

  // The next size; it becomes the current one. `in.free_cpus` must be > 0.
  PoolDecision Decide(const PoolInputs& in);

  // The shared pool's allowed range for `free_cpus`: [lowest, highest]. The shared pool
  // keeps at least one CPU (the plugin's rule); where the minimums do not both fit, the
  // reclaimed minimum is kept first (batch work must be able to run), then the shared one.
  struct Range {
    int lowest = 1;
    int highest = 1;
  };
  Range SharedRange(int free_cpus) const;

 private:
  PoolSizerOptions options_;
  std::optional<int> current_;
  std::optional<int64_t> last_change_;  // none yet: the first shrink needs no wait
};

}  // namespace qrm::advisor
