#include "advisor/guard/eviction_walk.h"

#include <algorithm>
#include <optional>
#include <set>

namespace qrm::advisor::guard {
namespace {

// Gaps below this are rounding, not usage.
constexpr double kNegligible = 1e-9;

// One walk over the applied plans, or over the previewed ones: each has its own bound.
struct Walk {
  bool preview = false;
  int evicted = 0, errors = 0;
  std::set<std::string> done;  // pods evicted or gone in this walk
};

void Exclude(GuardState& state, const std::string& pod, ExclusionReason reason, int64_t until_s) {
  Exclusion& e = state.excluded[pod];
  e.reason = reason;
  e.until_s = until_s;
}

// Asks the evictor (a preview assumes success) and records the outcome in the state.
EvictOutcome Attempt(const GuardCandidate& pod, Walk& walk, Evictor& evictor, GuardState& state,
                     int64_t now_s, const GuardTimings& timings) {
  if (walk.preview) return EvictOutcome::kEvicted;
  const EvictOutcome outcome = evictor.Evict(pod);
  switch (outcome) {
    case EvictOutcome::kEvicted:
    case EvictOutcome::kGone:
      Exclude(state, pod.Key(), ExclusionReason::kEvicted, now_s + timings.evicted_exclusion_s);
      break;
    case EvictOutcome::kBlockedByBudget:
      Exclude(state, pod.Key(), ExclusionReason::kRefused, now_s + timings.refused_exclusion_s);
      break;
    case EvictOutcome::kError:
      Exclude(state, pod.Key(), ExclusionReason::kFailed, now_s + timings.refused_exclusion_s);
      break;
  }
  return outcome;
}

// Why the walk of `plan` must stop before its next candidate, if it must.
std::optional<WalkStop> StopBefore(const EvictionPlan& plan, double remaining, const Walk& walk,
                                   const GuardTimings& timings) {
  if (remaining <= kNegligible) return WalkStop::kGapClosed;
  if (walk.evicted >= plan.max_pods) return WalkStop::kMaxPods;
  if (walk.errors >= timings.max_errors_per_walk) return WalkStop::kTooManyErrors;
  return std::nullopt;
}

EvictionPlanResult WalkPlan(const EvictionPlan& plan, Walk& walk, Evictor& evictor,
                            GuardState& state, int64_t now_s, const GuardTimings& timings,
                            EvictionReport& report) {
  EvictionPlanResult result{plan.metric, plan.preview,           plan.gap, plan.gap,
                            0,           WalkStop::kNoCandidates};
  // Pods an earlier plan of this walk evicted release this metric too.
  for (const EvictionCandidate& c : plan.candidates) {
    if (walk.done.contains(c.pod.Key())) result.remaining -= c.release;
  }
  for (const EvictionCandidate& c : plan.candidates) {
    if (const auto stop = StopBefore(plan, result.remaining, walk, timings)) {
      result.stop = *stop;
      break;
    }
    const std::string key = c.pod.Key();
    if (walk.done.contains(key)) continue;
    if (!walk.preview && state.excluded.contains(key)) continue;  // refused since planned
    const EvictOutcome outcome = Attempt(c.pod, walk, evictor, state, now_s, timings);
    const bool released = outcome == EvictOutcome::kEvicted || outcome == EvictOutcome::kGone;
    if (released) {
      result.remaining -= c.release;
      walk.done.insert(key);
    }
    if (outcome == EvictOutcome::kEvicted) {
      ++walk.evicted;
      ++result.evicted;
    }
    if (outcome == EvictOutcome::kError) ++walk.errors;
    report.attempts.push_back({key, plan.metric, walk.preview, outcome, released ? c.release : 0});
  }
  if (result.stop == WalkStop::kNoCandidates) {
    if (const auto stop = StopBefore(plan, result.remaining, walk, timings)) result.stop = *stop;
  }
  result.remaining = std::max(result.remaining, 0.0);
  return result;
}

}  // namespace

std::string_view EvictOutcomeName(EvictOutcome outcome) {
  switch (outcome) {
    case EvictOutcome::kEvicted: return "evicted";
    case EvictOutcome::kBlockedByBudget: return "blocked_by_budget";
    case EvictOutcome::kGone: return "gone";
    case EvictOutcome::kError: return "error";
  }
  return "unknown";
}

std::string_view WalkStopName(WalkStop stop) {
  switch (stop) {
    case WalkStop::kGapClosed: return "gap_closed";
    case WalkStop::kMaxPods: return "max_pods";
    case WalkStop::kTooManyErrors: return "too_many_errors";
    case WalkStop::kNoCandidates: return "no_candidates";
  }
  return "unknown";
}

EvictionReport RunEvictionWalk(const std::vector<EvictionPlan>& plans, Evictor& evictor,
                               GuardState& state, int64_t now_s, const GuardTimings& timings) {
  EvictionReport report;
  Walk applied, previewed;
  previewed.preview = true;
  for (const EvictionPlan& plan : plans) {
    Walk& walk = plan.preview ? previewed : applied;
    report.plans.push_back(WalkPlan(plan, walk, evictor, state, now_s, timings, report));
  }
  report.evicted = applied.evicted;
  report.errors = applied.errors;
  if (applied.evicted > 0) state.last_eviction_s = now_s;
  return report;
}

}  // namespace qrm::advisor::guard
