// One decision round of the watermark guard (docs/guard.md, "A round"): from the policy, the
// node's latest sample per metric and the pods, which quotas to change and which pods to offer
// the eviction walk (eviction_walk.h). Pure: the caller applies the quota changes, runs the
// walk, logs, counts and keeps the GuardState (the throttle checkpoint) between rounds.
//
// The rules, and why:
// - Candidates: reclaimed_cores pods, then shared_cores ones only when candidates.sharedCores;
//   dedicated_cores, system_cores and pods of an unknown or empty QoS level never (the guard
//   acts only on work that agreed to give way); pods on the skip list never.
// - Missing metric: a metric without a sample, with one older than stale_after_s, not finite,
//   or with a percent level and no capacity has no gap: its ensurances neither act nor count,
//   and their counters restart from 0 (the hits were not consecutive: an unseen sample may have
//   been either side). It is listed in missing_metrics every round (the caller counts
//   qrm_guard_metric_missing_total{metric}) and in newly_missing_metrics on the round it goes
//   missing (one warning). Crane acts on every pod instead.
// - Each sample counts once: an ensurance counts (and may act) only on a sample newer than the
//   last one it counted, so a round that runs twice on one sample cannot act twice on a
//   measurement that has not seen the first action yet.
// - Consecutive hits: above the watermark adds 1 to `above` and clears `below`; below
//   watermark - margin adds 1 to `below` and clears `above`; between the two clears both (a dip
//   resets). An ensurance fires on every counted sample with above >= avoidanceThreshold (the
//   precise walks act only for the gap the sample shows, so acting again is right while it
//   stays above). A changed rule (policy reload) starts its counters over.
// - Throttle down: the fired throttle and throttle-evict ensurances, per metric the largest gap
//   (Crane merges the waterlines of one metric and takes the lowest); metrics by action
//   priority, highest first; each walks the candidates in its order (PlanThrottleDown).
// - Not quantified: when a fired metric's release cannot be counted for the action, the round
//   acts on the registry's highest-priority metric quantified for that action only (the
//   document's GetHighestPriority...Metric), and touches at most maxPodsPerRound pods: a
//   throttle lowers each just enough to release some CPU, an eviction plan has an infinite gap.
// - Evict: per metric the largest gap of the fired evict and throttle-evict ensurances, less
//   what this round's throttling releases of that metric: throttle-evict evicts only for the
//   gap throttling could not close (all candidates at their floor, say). Plans go by action
//   priority; the walk shares maxPodsPerRound among them. A pod throttled this round releases
//   at most its new quota. Not during the cool-down (coolDownSeconds since the last round that
//   evicted, set by the walk); excluded pods (evicted, 429, failed: GuardState::excluded) are
//   left out, and so are pods whose usage of the metric is unknown (their release cannot be
//   counted). A plan lists at most 4 x maxPodsPerRound candidates: room for 429s, while one
//   round never asks the API server about every pod (refused pods are excluded, so the next
//   round goes on down the order).
// - Restore: only the throttles the guard holds (GuardState::throttled), only on a round where
//   every applied ensurance on a throttleable metric counted a sample and has
//   below >= restoreThreshold, within the smallest of their rooms (PlanRestore: one step each,
//   newest first). With no such ensurance left (a reload removed it) the throttles are stepped
//   back without a bound on the room: nothing is left to protect.
// - Preview: a Preview ensurance counts like any other; when it fires, its plan is made on a
//   copy of the state and reported apart (preview_quota_changes, plans marked preview): the
//   state is not changed as if it had been applied, and no cool-down applies to it. It never
//   restores (it holds no throttles).
// - Pods gone: a throttled pod no longer in `pods` (or back with another uid) is forgotten:
//   its quota went with it. `pods` must therefore be the node's complete pod list.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "advisor/guard/guard_candidate.h"
#include "advisor/guard/guard_metrics.h"
#include "advisor/guard/guard_policy.h"
#include "advisor/guard/precise_plan.h"

namespace qrm::advisor::guard {

// The node's latest sample of one metric.
struct MetricSample {
  double value = 0;    // in the metric's unit: cores, bytes
  int64_t time_s = 0;  // Unix seconds it was taken
};

// A running pod, with its QoS level as qrm resolves it ("reclaimed_cores", "shared_cores",
// "dedicated_cores", "system_cores"); the round sets candidate.cls from it.
struct GuardPod {
  GuardCandidate candidate;
  std::string qos_level;
};

struct RoundInput {
  int64_t now_s = 0;                            // Unix seconds
  std::map<std::string, MetricSample> samples;  // by metric name
  std::map<std::string, double> capacity;       // by metric name: the node's cores, bytes
  std::vector<GuardPod> pods;                   // every pod on the node
};

struct GuardTimings {
  int64_t stale_after_s = 5;          // a node sample older than this is missing
  int64_t refused_exclusion_s = 60;   // a pod that answered 429 or failed is not retried sooner
  int64_t evicted_exclusion_s = 600;  // an evicted (terminating) pod is left alone this long
  int max_errors_per_walk = 3;        // an eviction walk stops after this many failures
};

// Counts of one ensurance between rounds.
struct EnsuranceCounters {
  ObjectiveEnsurance rule;  // the rule they count for: a changed rule starts over
  int above = 0, below = 0;
  std::optional<int64_t> last_sample_s;  // the sample last counted
};

enum class ExclusionReason { kEvicted, kRefused, kFailed };

struct Exclusion {
  int64_t until_s = 0;
  ExclusionReason reason = ExclusionReason::kRefused;
};

// What the guard carries from one round to the next (and checkpoints).
struct GuardState {
  std::map<std::string, EnsuranceCounters> counters;  // by ensurance name
  ThrottledPods throttled;                            // the throttles the guard holds
  uint64_t sequence = 0;                              // the next throttle's sequence
  std::optional<int64_t> last_eviction_s;             // the last walk that evicted a pod
  std::map<std::string, Exclusion> excluded;          // by GuardCandidate::Key()
  std::set<std::string> missing_metrics;              // as of the last round
};

// One ensurance's view of this round.
struct EnsuranceReport {
  std::string name, metric;
  bool preview = false;
  bool missing = false;  // no fresh sample: it neither counted nor acted
  bool counted = false;  // a new sample was counted
  std::optional<double> usage, gap, room;
  double watermark = 0, restore_below = 0;  // resolved against the capacity
  int above = 0, below = 0;
  bool fired = false;  // above >= avoidanceThreshold on this sample: its action ran
};

// A pod the eviction walk may evict, with what evicting it releases of the plan's metric.
struct EvictionCandidate {
  GuardCandidate pod;
  double release = 0;
};

// Ordered candidates for one metric; the walk evicts them one at a time until `gap` is closed
// or `max_pods` are evicted (eviction_walk.h). No candidates: the gap is due but no pod may
// give way (reported, so that the operator can see it).
struct EvictionPlan {
  std::string metric;
  bool preview = false;
  bool quantified = true;  // false: a bounded walk, gap infinite
  double gap = 0;
  int max_pods = 0;
  std::vector<EvictionCandidate> candidates;
};

struct GuardDecision {
  std::vector<EnsuranceReport> ensurances;  // in the policy's order
  std::vector<QuotaChange> quota_changes;   // to apply: throttle down, then restore
  std::vector<QuotaChange> preview_quota_changes;
  std::vector<EvictionPlan> evictions;             // by action priority; previews after the others
  bool eviction_cooling_down = false;              // an eviction was due but the cool-down holds it
  std::vector<std::string> missing_metrics;        // sorted
  std::vector<std::string> newly_missing_metrics;  // missing now, not the round before
};

// One decision round at input.now_s; updates `state` (counters, throttles, exclusions,
// missing metrics). `registry` resolves the ensurances' metric names (tests pass their own).
GuardDecision DecideRound(const GuardPolicy& policy, const RoundInput& input, GuardState& state,
                          const GuardTimings& timings = {},
                          const std::vector<GuardMetric>& registry = Metrics());

// The candidates among `pods` (candidate.cls set from the QoS level), in input order.
std::vector<GuardCandidate> SelectCandidates(const std::vector<GuardPod>& pods,
                                             const CandidateOptions& options);

}  // namespace qrm::advisor::guard
