// The guard's precise walks (the precise-execution document): given how far a node metric is
// above its watermark and the candidates in their order, which pods to act on and how, stopping
// as soon as the gap is closed. Pure functions: the guard applies a plan (quotas through
// qrm-host, evictions through the Eviction API) and measures again at the next sample.
//
// Three defects of Crane's executor are absent by construction (tests pin each):
// - the floor is min_cpu_ratio of the limit, the same value it is tested against;
// - restore walks the throttled pods (in reverse order of throttling), not the down list;
// - throttle-down and restore have their own gaps and functions: one never overwrites the
//   other.
// And a metric whose node usage is unknown has no gap (GapAbove returns none): no action for
// it, never "act on every pod".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "advisor/guard/guard_candidate.h"
#include "advisor/guard/guard_metrics.h"
#include "advisor/guard/guard_policy.h"

namespace qrm::advisor::guard {

// How far `usage` is above `watermark` (> 0), 0 when at or below, none when usage is unknown.
std::optional<double> GapAbove(std::optional<double> usage, double watermark);
// How far `usage` is below `watermark - margin` (> 0: room to restore), 0 when not below,
// none when usage is unknown.
std::optional<double> RoomBelow(std::optional<double> usage, double watermark, double margin);

// The smallest quota the guard gives a pod: min_cpu_ratio of its limit, its request unless
// below_request, and 0.01 core (a 1 ms quota per 100 ms period, the kernel's minimum).
double QuotaFloor(const GuardCandidate& pod, const ThrottleOptions& options);

// A pod the guard holds at a quota, as the guard remembers it (and checkpoints it).
struct ThrottledPod {
  GuardCandidate pod;     // as of its last step
  double quota = 0;       // cores
  double ceiling = 0;     // the quota at which it is released: its limit, or its usage when first
                          // throttled (a pod without a limit)
  uint64_t sequence = 0;  // when it was first throttled: restore goes newest first
};
using ThrottledPods = std::map<std::string, ThrottledPod>;  // by GuardCandidate::Key()

struct QuotaChange {
  std::string pod;                 // GuardCandidate::Key()
  std::optional<double> from, to;  // cores; none: no quota (not throttled / released)
  double released = 0;  // throttle down: usage - new quota; restore: the usage it may regain
};

struct QuotaPlan {
  std::vector<QuotaChange> changes;
  double remaining = 0;  // gap left open (down) or room left (up)
};

// Throttle down: walks `sorted` (the metric's order) and lowers each pod's quota by as many
// steps of step_ratio (from its quota, or from its usage when not yet throttled) as needed to
// release the remaining gap, never below QuotaFloor; a pod whose usage is unknown, or which
// would release nothing, is left alone. Stops as soon as the gap is closed, so the fewest pods
// at the front of the order are touched. Updates `throttled` (new pods get `sequence` on).
QuotaPlan PlanThrottleDown(const std::vector<GuardCandidate>& sorted, double gap,
                           const ThrottleOptions& options, ThrottledPods& throttled,
                           uint64_t& sequence);
// The same over pointers to the pods (a round's sorted view, no copies).
QuotaPlan PlanThrottleDown(const std::vector<const GuardCandidate*>& sorted, double gap,
                           const ThrottleOptions& options, ThrottledPods& throttled,
                           uint64_t& sequence);

// Restore: once the node has room below the watermark minus margin, raises the throttled
// pods' quotas by one step each, newest throttled first, while the usage a raise may let back
// in (the quota's increase) fits in the room; a pod whose next step reaches its ceiling is
// released (no quota). Updates `throttled`.
QuotaPlan PlanRestore(double room, const ThrottleOptions& options, ThrottledPods& throttled);

struct EvictPlan {
  std::vector<std::string> pods;  // GuardCandidate::Key(), in order
  double remaining = 0;
};

// Evict: walks `sorted` and picks pods one at a time, each releasing its measured usage of
// `metric`, until the gap is closed or `max_pods` are picked; a pod whose usage is unknown
// is passed over (what evicting it would release cannot be counted). `excluded` pods (a 429
// from a PodDisruptionBudget this round, or already evicted) are skipped.
EvictPlan PlanEviction(const std::vector<GuardCandidate>& sorted, const GuardMetric& metric,
                       double gap, int max_pods, const std::vector<std::string>& excluded = {});

}  // namespace qrm::advisor::guard
