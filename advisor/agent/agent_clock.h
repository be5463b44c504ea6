// The advisor's time: Unix seconds that never go back. Every period the agent keeps (the
// inventory refresh, the pool controller's 30 s shrink interval, staleness, the store's slots)
// is measured on it, so a wall clock stepped back by NTP or an operator cannot freeze them for
// the size of the step, and the store never sees time run backwards.
//
// It is the wall clock read at start, advanced by the steady clock. When the wall clock runs
// more than `step_tolerance_s` ahead (stepped forward, or the steady clock stopped during a
// suspend), it follows: that is a gap in sampling, which everything handles. When the wall
// clock falls behind (stepped back), the advisor's time keeps running and the difference is
// logged once: its timestamps then run ahead of the wall clock by the step until a restart.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "common/log.h"
#include "common/mutex.h"

namespace qrm::advisor {

class AgentClock {
 public:
  using WallSeconds = std::function<int64_t()>;
  using SteadyNanoseconds = std::function<int64_t()>;

  // The process's clocks (time(), steady_clock).
  AgentClock();
  // Given clocks, for tests.
  AgentClock(WallSeconds wall, SteadyNanoseconds steady, int64_t step_tolerance_s = 5);

  // Unix seconds, never less than an earlier answer. Thread-safe (the loop and the health
  // check read it).
  int64_t Now();

 private:
  const WallSeconds wall_;
  const SteadyNanoseconds steady_;
  const int64_t tolerance_s_;
  Mutex mu_;
  int64_t anchor_wall_s_ QRM_GUARDED_BY(mu_);     // the wall clock at the anchor
  int64_t anchor_steady_ns_ QRM_GUARDED_BY(mu_);  // the steady clock at the anchor
  int64_t last_ QRM_GUARDED_BY(mu_) = 0;
  bool behind_logged_ QRM_GUARDED_BY(mu_) = false;
  std::shared_ptr<spdlog::logger> log_;
};

}  // namespace qrm::advisor
