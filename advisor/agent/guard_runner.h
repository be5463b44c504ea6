// GuardRunner: the watermark guard in qrm-advisor (docs/guard.md, "In qrm-advisor"). After each
// agent tick it reloads the policy if the file changed, builds the round's input from the tick
// (guard_inputs.h), decides (advisor/guard/guard_round.h) and acts:
// - quotas through qrm-host (host_throttles.h), split over the pod's containers by their usage,
//   each a lease the runner renews while it holds the pod; the host restores a container whose
//   lease runs out, so a guard that dies leaves nothing throttled for long;
// - evictions through the Evictor of the policy's mode (the Eviction API, or the CRI), walked
//   by advisor/guard/eviction_walk.h; in dry-run mode, or a mode the daemon has no evictor
//   for (said once), the plans are walked as previews: logged, nobody evicted;
// - after its own restart it takes back the throttles qrm-host holds for it, so they are
//   restored in steps as before, not dropped.
// Everything it did is kept for `qrmctl guard` (Snapshot) and counted in metrics.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "advisor/agent/guard_inputs.h"
#include "advisor/agent/host_throttles.h"
#include "advisor/guard/eviction_walk.h"
#include "advisor/guard/guard_round.h"
#include "advisor/guard/policy_source.h"
#include "common/log.h"
#include "common/mutex.h"

namespace qrm::advisor {

struct GuardRunnerOptions {
  std::string policy_file;  // "" : no guard
  int64_t lease_s = 60;     // of each throttle at qrm-host; renewed when half has run out
  int64_t period_us = 100000;
  guard::GuardTimings timings;
  size_t remembered_actions = 100;  // the recent actions Snapshot keeps
};

// One thing the guard did (or, dry-run/preview, would have done).
struct GuardAction {
  int64_t time = 0;
  std::string pod;     // namespace/name
  std::string action;  // "throttle", "restore", "release", "evict", "would-evict", ...
  std::string detail;  // the quota, the outcome, the error
};

struct GuardSnapshot {
  std::string policy_file;
  std::string policy_error;  // the rejected reload, while the last good policy is in force
  std::string eviction_mode;
  int64_t last_round = 0;
  std::vector<guard::EnsuranceReport> ensurances;
  guard::ThrottledPods throttled;
  std::vector<std::string> missing_metrics;
  std::deque<GuardAction> recent;  // newest last
};

// The evictors the daemon could set up, by mode ("api" needs a cluster config, "cri" a
// runtime); the policy's mode picks one at each walk, so a reload may switch modes.
using Evictors = std::map<guard::EvictMode, std::unique_ptr<guard::Evictor>>;

class GuardRunner {
 public:
  GuardRunner(GuardRunnerOptions options, std::unique_ptr<ThrottleTarget> host, Evictors evictors);

  // The first policy load; an error (naming the file) means the daemon must not start.
  Status Start();
  // One round on the agent's last tick, at `now` (Unix seconds). One caller thread.
  void Round(const Agent& agent, int64_t now);
  GuardSnapshot Snapshot() const;
  const guard::GuardPolicy& policy() const { return policy_.policy(); }

 private:
  // What the runner last got qrm-host to hold for a pod: its quota and each container's part.
  struct Held {
    std::string uid;
    double cores = 0;
    std::map<std::string, int64_t> quota_us;  // by container
    int64_t renew_at = 0;                     // 0: set again now (a failed or recovered call)
  };
  void Reload();
  // Takes back what qrm-host holds for the guard (after a restart of qrm-advisor).
  void Recover(GuardInput& input);
  // Makes qrm-host hold what state_.throttled says: new quotas, renewed leases, releases.
  void Sync(const GuardInput& input, int64_t now, const std::string& reason);
  bool SetPod(const GuardedPod& pod, const Held& held, const std::string& reason);
  // Splits a new pod quota over its containers; gives back the ones that lost their part.
  void Resplit(const GuardedPod& pod, double cores, Held& held);
  // Replaces the runtime's view of held containers' quotas by their own limits.
  void ApplyOwnLimits(GuardInput& input) const;
  void ReleasePod(const std::string& key, const Held& held);
  void Evict(const guard::GuardDecision& decision, int64_t now);
  void Remember(int64_t now, const std::string& pod, std::string action, std::string detail);
  void Publish(const guard::GuardDecision& decision, int64_t now);

  const GuardRunnerOptions options_;
  std::unique_ptr<ThrottleTarget> host_;
  Evictors evictors_;
  bool said_no_evictor_ = false;
  guard::PolicySource policy_;
  guard::GuardState state_;
  std::map<std::string, Held> held_;  // by pod key (namespace/name)
  // Each held container's own quota and period as qrm-host keeps them to give back, by
  // "<pod uid>/<container>".
  std::map<std::string, std::pair<int64_t, int64_t>> own_limits_;
  std::vector<std::string> last_previews_;  // the previewed evictions of the last round
  bool recovered_ = false;
  std::string policy_error_;
  std::deque<GuardAction> recent_;
  mutable Mutex mu_;
  GuardSnapshot snapshot_ QRM_GUARDED_BY(mu_);
  std::shared_ptr<spdlog::logger> log_;
};

// The kernel's smallest cpu.cfs_quota_us.
inline constexpr int64_t kMinQuotaUs = 1000;

// Containers using less than this share of their pod's CPU are not throttled.
inline constexpr double kThrottledShare = 0.1;

// A pod's quota (cores) split over its containers (us per `period_us`, in their order) in
// proportion to what each uses, each at least the kernel's minimum of 1000 us and at most the
// container's own quota (a throttle only takes CPU away); 0 for a
// container left unthrottled (under kThrottledShare of the pod's usage). A pod none of whose
// containers was sampled is split equally.
std::vector<int64_t> SplitQuota(const GuardedPod& pod, double cores, int64_t period_us);

}  // namespace qrm::advisor
