// The eviction walk (docs/guard.md, "Eviction walk"): executes a round's eviction plans
// (guard_round.h) against an Evictor, one pod at a time, so that each eviction's release is
// counted before the next pod is touched and the walk stops exactly when the gap is closed.
//
// The rules, and why:
// - Plans run in the round's order (action priority) and share one bound: maxPodsPerRound
//   evicted pods per walk, whatever the metric.
// - A pod evicted (or found gone) for an earlier plan counts for the later ones too, at once:
//   it no longer uses anything, and is not asked again.
// - evicted: its release counts; it is excluded for evicted_exclusion_s (it may be listed while
//   it terminates, and must not be evicted or counted twice).
// - gone: it no longer runs, so its release counts too, but it is not one of the pods evicted.
// - blocked_by_budget (429, a PodDisruptionBudget): the next candidate is tried, and the pod is
//   excluded for refused_exclusion_s so that the next rounds do not ask again at once.
// - error: reported, excluded like a 429, the next candidate tried; after
//   max_errors_per_walk errors the walk stops (an API server that fails is not hammered).
// - The cool-down starts (GuardState::last_eviction_s) only when a pod was evicted: a round
//   refused everywhere releases nothing, and the next one may try other pods.
// - Preview plans are walked as if every eviction succeeded, without calling the Evictor and
//   without changing the state: what would have been evicted.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "advisor/guard/guard_candidate.h"
#include "advisor/guard/guard_round.h"

namespace qrm::advisor::guard {

enum class EvictOutcome { kEvicted, kBlockedByBudget, kGone, kError };

// "evicted", "blocked_by_budget", "gone", "error".
std::string_view EvictOutcomeName(EvictOutcome outcome);

// Evicts one pod: the Eviction API (a 429 is kBlockedByBudget, a 404 kGone), the CRI, or a
// dry run that only logs. Errors are the implementation's to log; the walk counts them.
class Evictor {
 public:
  virtual ~Evictor() = default;
  virtual EvictOutcome Evict(const GuardCandidate& pod) = 0;
  // The policy's terminationGracePeriodSeconds, set before each walk (an evictor that cannot
  // pass one on ignores it).
  virtual void SetGracePeriod(int64_t /*seconds*/) {}
};

struct EvictionAttempt {
  std::string pod;     // GuardCandidate::Key()
  std::string metric;  // the plan it was tried for
  bool preview = false;
  EvictOutcome outcome = EvictOutcome::kEvicted;
  double released = 0;  // counted toward the plan's gap (evicted, gone); 0 otherwise
};

enum class WalkStop { kGapClosed, kMaxPods, kTooManyErrors, kNoCandidates };

// "gap_closed", "max_pods", "too_many_errors", "no_candidates".
std::string_view WalkStopName(WalkStop stop);

struct EvictionPlanResult {
  std::string metric;
  bool preview = false;
  double gap = 0, remaining = 0;
  int evicted = 0;
  WalkStop stop = WalkStop::kGapClosed;
};

struct EvictionReport {
  std::vector<EvictionAttempt> attempts;  // in the order they were made
  std::vector<EvictionPlanResult> plans;  // one per plan walked
  int evicted = 0, errors = 0;            // the applied plans'
};

// Walks `plans` at `now_s`; updates `state` (exclusions, last_eviction_s) for applied plans.
EvictionReport RunEvictionWalk(const std::vector<EvictionPlan>& plans, Evictor& evictor,
                               GuardState& state, int64_t now_s, const GuardTimings& timings = {});

}  // namespace qrm::advisor::guard
