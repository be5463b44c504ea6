#include "advisor/agent/agent_clock.h"

#include <algorithm>
#include <chrono>
#include <ctime>

namespace qrm::advisor {

AgentClock::AgentClock()
    : AgentClock([] { return static_cast<int64_t>(std::time(nullptr)); },
                 [] {
                   return static_cast<int64_t>(
                       std::chrono::steady_clock::now().time_since_epoch().count());
                 }) {}

AgentClock::AgentClock(WallSeconds wall, SteadyNanoseconds steady, int64_t step_tolerance_s)
    : wall_(std::move(wall)),
      steady_(std::move(steady)),
      tolerance_s_(step_tolerance_s),
      anchor_wall_s_(wall_()),
      anchor_steady_ns_(steady_()),
      log_(Logger("advisor")) {}

int64_t AgentClock::Now() {
  constexpr int64_t kNsPerSecond = 1'000'000'000;
  MutexLock lock(mu_);
  const int64_t wall = wall_();
  const int64_t steady = steady_();
  int64_t now = anchor_wall_s_ + (steady - anchor_steady_ns_) / kNsPerSecond;
  if (wall - now > tolerance_s_) {
    log_->info("wall clock is {} s ahead of the advisor's time (stepped forward): following it",
               wall - now);
    anchor_wall_s_ = wall;
    anchor_steady_ns_ = steady;
    now = wall;
    behind_logged_ = false;
  } else if (now - wall > tolerance_s_ && !behind_logged_) {
    log_->warn(
        "wall clock is {} s behind the advisor's time (stepped back): the advisor's time keeps "
        "running, its timestamps are ahead of the wall clock until it restarts",
        now - wall);
    behind_logged_ = true;
  }
  last_ = std::max(last_, now);
  return last_;
}

}  // namespace qrm::advisor
