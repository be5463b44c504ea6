// Where the shim's time goes in the calls it intercepts: each step of such a call is timed
// into the histogram qrm_cri_shim_phase_seconds{method, phase} of the process's metrics
// registry (served on /metrics). Pass-through calls are not timed here (ShimCounters keeps
// their latency without touching a histogram).
//
// Phases, in the order a call goes through them (a call skips those it does not have):
//   queued     the request was read; waiting for a pool thread
//   decode     request parsed, pod and container identified, skip rules, ContainerRequest
//   admission  host admission (hints, merge, Allocate on the plugins, host checkpoint),
//              under the shim's pod lock
//   pre_start  PreStartContainer on the plugins that asked for it
//   encode     qrm's decisions written into the request, re-encoded
//   runtime    the runtime's answer to the forwarded request
//   record     the shim's bookkeeping afterwards (id index, releases, rollback)
#pragma once

#include <array>
#include <atomic>
#include <chrono>

#include "common/metrics/metrics.h"
#include "cri-shim/method_table.h"

namespace qrm::shim {

enum class Phase { kQueued, kDecode, kAdmission, kPreStart, kEncode, kRuntime, kRecord };

class CallPhases {
 public:
  explicit CallPhases(metrics::Registry& registry) : registry_(registry) {}
  CallPhases(const CallPhases&) = delete;
  CallPhases& operator=(const CallPhases&) = delete;

  // The histogram of one (method, phase); looked up in the registry once, then cached.
  metrics::Histogram& Of(Intercept method, Phase phase);

 private:
  static constexpr size_t kMethods = static_cast<size_t>(Intercept::kUpdateContainerResources) + 1;
  static constexpr size_t kPhases = static_cast<size_t>(Phase::kRecord) + 1;

  metrics::Registry& registry_;
  std::array<std::array<std::atomic<metrics::Histogram*>, kPhases>, kMethods> cache_{};
};

// Times the consecutive phases of one call: Lap(phase) records the time since the previous
// lap (or since `start`) as that phase.
class PhaseClock {
 public:
  using Clock = std::chrono::steady_clock;
  PhaseClock(CallPhases& phases, Intercept method, Clock::time_point start = Clock::now())
      : phases_(phases), method_(method), last_(start) {}

  void Lap(Phase phase);

 private:
  CallPhases& phases_;
  const Intercept method_;
  Clock::time_point last_;
};

}  // namespace qrm::shim
