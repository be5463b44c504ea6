#include "advisor/guard/guard_round.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <unordered_set>

namespace qrm::advisor::guard {
namespace {

// Gaps, rooms and releases below this are rounding, not usage.
constexpr double kNegligible = 1e-9;
// A gap that one step of any pod closes: the bounded throttle lowers each pod by one step.
constexpr double kOneStepGap = 1e-6;
// Counters stop here: far above any threshold (at most 1000), never overflowing.
constexpr int kCountCap = 1 << 30;
constexpr double kInfinity = std::numeric_limits<double>::infinity();
// An eviction plan lists at most this many candidates per pod it may evict: room for 429s and
// errors, while one round never asks the API server about every pod. Refused pods are
// excluded, so the next round goes on down the order.
constexpr int kListedPerPod = 4;

bool Throttles(GuardAction a) {
  return a != GuardAction::kEvict;
}

bool Evicts(GuardAction a) {
  return a != GuardAction::kThrottle;
}

const GuardMetric* Lookup(const std::vector<GuardMetric>& registry, std::string_view name) {
  for (const GuardMetric& m : registry) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

// The registry's highest-priority metric whose release can be counted for the action: what a
// round acts on when a fired metric's cannot (the document's GetHighestPriority...Metric).
const GuardMetric* HighestPriorityQuantified(const std::vector<GuardMetric>& registry,
                                             bool throttle) {
  const GuardMetric* best = nullptr;
  for (const GuardMetric& m : registry) {
    const bool quantified =
        throttle ? m.throttleable && m.throttle_quantified : m.evictable && m.evict_quantified;
    if (quantified && (!best || m.action_priority > best->action_priority)) best = &m;
  }
  return best;
}

// An ensurance that fired this round.
struct Fired {
  const ObjectiveEnsurance* rule = nullptr;
  const GuardMetric* metric = nullptr;
  double gap = 0;
};

// One metric's gap for one action, the largest of its ensurances'.
struct MetricGap {
  const GuardMetric* metric = nullptr;
  double gap = 0;
};

// Highest action priority first; the name breaks ties, so a round is reproducible.
void SortByPriority(std::vector<MetricGap>& gaps) {
  std::sort(gaps.begin(), gaps.end(), [](const MetricGap& a, const MetricGap& b) {
    if (a.metric->action_priority != b.metric->action_priority) {
      return a.metric->action_priority > b.metric->action_priority;
    }
    return a.metric->name < b.metric->name;
  });
}

void MergeGap(std::vector<MetricGap>& gaps, const GuardMetric* metric, double gap) {
  for (MetricGap& g : gaps) {
    if (g.metric == metric) {
      g.gap = std::max(g.gap, gap);
      return;
    }
  }
  gaps.push_back({metric, gap});
}

// The pods are sorted as pointers: a round sorts for up to three walks, and copying 500 pods
// each time was most of its cost.
using PodView = std::vector<const GuardCandidate*>;

PodView InOrder(PodView pods, const GuardMetric& metric) {
  (metric.sortable ? metric.order : GeneralOrder()).Sort(pods);
  return pods;
}

// ---- measuring and counting ----

EnsuranceReport Measure(const ObjectiveEnsurance& rule, const GuardMetric* metric,
                        const RoundInput& in, const GuardTimings& timings) {
  EnsuranceReport r;
  r.name = rule.name;
  r.metric = rule.metric;
  r.preview = rule.strategy == Strategy::kPreview;
  const auto sample = in.samples.find(rule.metric);
  const auto capacity = in.capacity.find(rule.metric);
  const double cap = capacity == in.capacity.end() ? 0 : capacity->second;
  const bool needs_capacity = rule.watermark.percent || rule.restore_margin.percent;
  r.missing = metric == nullptr || sample == in.samples.end() ||
              !std::isfinite(sample->second.value) ||
              in.now_s - sample->second.time_s > timings.stale_after_s ||
              (needs_capacity && !(cap > 0 && std::isfinite(cap)));
  if (r.missing) return r;
  r.usage = sample->second.value;
  r.watermark = rule.watermark.Resolve(cap);
  const double margin = rule.restore_margin.Resolve(cap);
  r.restore_below = r.watermark - margin;
  r.gap = GapAbove(r.usage, r.watermark);
  r.room = RoomBelow(r.usage, r.watermark, margin);
  return r;
}

// Consecutive hits, one count per new sample; a missing sample restarts both counts.
void Count(const ObjectiveEnsurance& rule, int64_t sample_s, EnsuranceCounters& c,
           EnsuranceReport& r) {
  if (!(c.rule == rule)) c = EnsuranceCounters{rule, 0, 0, std::nullopt};
  if (r.missing) {
    c.above = c.below = 0;
  } else if (!c.last_sample_s || sample_s > *c.last_sample_s) {
    r.counted = true;
    c.last_sample_s = sample_s;
    const bool above = *r.gap > 0, below = *r.room > 0;
    c.above = above ? std::min(c.above + 1, kCountCap) : 0;
    c.below = below ? std::min(c.below + 1, kCountCap) : 0;
  }
  r.above = c.above;
  r.below = c.below;
  r.fired = r.counted && *r.gap > 0 && c.above >= rule.avoidance_threshold;
}

// Forgets what no longer applies: expired exclusions, throttles of pods that are gone, the
// counters of ensurances the policy no longer has.
void Prune(const GuardPolicy& policy, const RoundInput& in, GuardState& state) {
  std::erase_if(state.excluded, [&](const auto& e) { return e.second.until_s <= in.now_s; });
  std::erase_if(state.counters, [&](const auto& c) {
    return std::none_of(policy.ensurances.begin(), policy.ensurances.end(),
                        [&](const ObjectiveEnsurance& e) { return e.name == c.first; });
  });
  if (state.throttled.empty()) return;
  std::unordered_set<std::string_view> uids;
  for (const GuardPod& p : in.pods) uids.insert(p.candidate.pod_uid);
  std::erase_if(state.throttled,
                [&](const auto& t) { return !uids.contains(t.second.pod.pod_uid); });
}

// ---- throttling ----

struct ThrottleResult {
  std::vector<QuotaChange> changes;
  std::map<std::string_view, double> released;  // by metric name
};

// A metric whose release cannot be counted fired: at most max_pods pods of the fallback
// metric's order, each lowered just enough to release some CPU.
void BoundedThrottle(const PodView& sorted, const GuardMetric& metric, const GuardPolicy& policy,
                     ThrottledPods& throttled, uint64_t& sequence, ThrottleResult& out) {
  int touched = 0;
  for (const GuardCandidate* pod : sorted) {
    if (touched >= policy.eviction.max_pods_per_round) break;
    QuotaPlan one =
        PlanThrottleDown(PodView{pod}, kOneStepGap, policy.throttle, throttled, sequence);
    if (one.changes.empty()) continue;
    ++touched;
    out.released[metric.name] += one.changes[0].released;
    out.changes.push_back(std::move(one.changes[0]));
  }
}

ThrottleResult Throttle(const std::vector<MetricGap>& gaps, const PodView& candidates,
                        const GuardPolicy& policy, const std::vector<GuardMetric>& registry,
                        ThrottledPods& throttled, uint64_t& sequence) {
  ThrottleResult out;
  if (gaps.empty()) return out;
  const bool quantified = std::all_of(gaps.begin(), gaps.end(), [](const MetricGap& g) {
    return g.metric->throttleable && g.metric->throttle_quantified;
  });
  if (!quantified) {
    if (const GuardMetric* fallback = HighestPriorityQuantified(registry, true)) {
      BoundedThrottle(InOrder(candidates, *fallback), *fallback, policy, throttled, sequence, out);
    }
    return out;
  }
  for (const MetricGap& g : gaps) {
    QuotaPlan plan = PlanThrottleDown(InOrder(candidates, *g.metric), g.gap, policy.throttle,
                                      throttled, sequence);
    out.released[g.metric->name] += g.gap - plan.remaining;
    for (QuotaChange& c : plan.changes) out.changes.push_back(std::move(c));
  }
  return out;
}

// ---- eviction ----

// Per metric, what is left for eviction: the gap less what this round's throttling released
// of that metric; a throttle-evict metric whose throttle release cannot be counted evicts only
// when throttling touched nobody.
std::vector<MetricGap> EvictionGaps(const std::vector<Fired>& fired, const ThrottleResult& t) {
  std::vector<MetricGap> gaps;
  for (const Fired& f : fired) {
    if (!Evicts(f.rule->action)) continue;
    // Released in the metric's own unit: a walk on another metric releases none of it.
    double need = f.gap;
    if (const auto released = t.released.find(f.metric->name); released != t.released.end()) {
      need -= released->second;
    }
    const bool counted = f.metric->throttleable && f.metric->throttle_quantified;
    if (f.rule->action == GuardAction::kThrottleThenEvict && !counted && !t.changes.empty()) {
      need = 0;  // throttled what it could; the next sample shows whether that was enough
    }
    if (need > kNegligible) MergeGap(gaps, f.metric, need);
  }
  SortByPriority(gaps);
  return gaps;
}

// What evicting `pod` releases of `metric`; a throttled pod at most its quota.
std::optional<double> Release(const GuardCandidate& pod, const GuardMetric& metric,
                              const ThrottledPods& throttled) {
  std::optional<double> usage = metric.pod_usage ? metric.pod_usage(pod) : std::nullopt;
  if (!usage || !std::isfinite(*usage)) return std::nullopt;
  if (metric.throttleable) {
    if (const auto held = throttled.find(pod.Key()); held != throttled.end()) {
      usage = std::min(*usage, held->second.quota);
    }
  }
  return usage;
}

EvictionPlan PlanFor(const GuardMetric& metric, double gap, bool quantified,
                     const PodView& candidates, const GuardPolicy& policy,
                     const ThrottledPods& throttled) {
  EvictionPlan plan;
  plan.metric = std::string(metric.name);
  plan.quantified = quantified;
  // clang-tidy 14 takes infinity for a double that does not fit a double.
  plan.gap = quantified ? gap : kInfinity;  // NOLINT(bugprone-narrowing-conversions)
  plan.max_pods = policy.eviction.max_pods_per_round;
  const size_t listed = size_t{kListedPerPod} * static_cast<size_t>(plan.max_pods);
  for (const GuardCandidate* pod : InOrder(candidates, metric)) {
    if (plan.candidates.size() >= listed) break;
    const std::optional<double> release = Release(*pod, metric, throttled);
    if (!release || *release <= kNegligible) continue;  // what it releases is unknown: passed
    plan.candidates.push_back({*pod, *release});
  }
  return plan;
}

std::vector<EvictionPlan> PlanEvictions(const std::vector<MetricGap>& gaps,
                                        const PodView& candidates, const GuardPolicy& policy,
                                        const std::vector<GuardMetric>& registry,
                                        const ThrottledPods& throttled) {
  std::vector<EvictionPlan> plans;
  const bool quantified = std::all_of(gaps.begin(), gaps.end(), [](const MetricGap& g) {
    return g.metric->evictable && g.metric->evict_quantified;
  });
  if (!quantified) {
    if (const GuardMetric* fallback = HighestPriorityQuantified(registry, false)) {
      plans.push_back(PlanFor(*fallback, 0, false, candidates, policy, throttled));
    }
    return plans;
  }
  for (const MetricGap& g : gaps) {
    plans.push_back(PlanFor(*g.metric, g.gap, true, candidates, policy, throttled));
  }
  return plans;
}

// ---- one pass: the applied ensurances, or the previewed ones ----

struct Candidates {
  std::vector<GuardCandidate> all;
  PodView throttle;  // not being evicted
  PodView evict;     // not excluded at all
};

void Eligible(const RoundInput& in, const GuardPolicy& policy, const GuardState& state,
              Candidates& out) {
  out.all = SelectCandidates(in.pods, policy.candidates);
  for (const GuardCandidate& c : out.all) {
    const auto excluded =
        state.excluded.empty() ? state.excluded.end() : state.excluded.find(c.Key());
    if (excluded == state.excluded.end()) out.evict.push_back(&c);
    if (excluded == state.excluded.end() || excluded->second.reason != ExclusionReason::kEvicted) {
      out.throttle.push_back(&c);
    }
  }
}

bool CoolingDown(const GuardPolicy& policy, const GuardState& state, int64_t now_s) {
  return state.last_eviction_s && now_s - *state.last_eviction_s < policy.eviction.cool_down_s;
}

struct PassContext {
  const GuardPolicy& policy;
  const RoundInput& input;
  const std::vector<GuardMetric>& registry;
  const Candidates& candidates;
};

void Act(const PassContext& ctx, const std::vector<Fired>& fired, bool preview,
         ThrottledPods& throttled, uint64_t& sequence, const GuardState& state,
         GuardDecision& out) {
  std::vector<MetricGap> throttle_gaps;
  for (const Fired& f : fired) {
    if (Throttles(f.rule->action)) MergeGap(throttle_gaps, f.metric, f.gap);
  }
  SortByPriority(throttle_gaps);
  ThrottleResult t = Throttle(throttle_gaps, ctx.candidates.throttle, ctx.policy, ctx.registry,
                              throttled, sequence);
  auto& changes = preview ? out.preview_quota_changes : out.quota_changes;
  for (QuotaChange& c : t.changes) changes.push_back(std::move(c));
  const std::vector<MetricGap> evict_gaps = EvictionGaps(fired, t);
  if (evict_gaps.empty()) return;
  if (!preview && CoolingDown(ctx.policy, state, ctx.input.now_s)) {
    out.eviction_cooling_down = true;
    return;
  }
  for (EvictionPlan& plan :
       PlanEvictions(evict_gaps, ctx.candidates.evict, ctx.policy, ctx.registry, throttled)) {
    plan.preview = preview;
    out.evictions.push_back(std::move(plan));
  }
}

// Every applied ensurance on a throttleable metric agrees: below its restore line for
// restoreThreshold counted samples. The room is the smallest of the quantified ones' (a raise
// lets back CPU: a room in another unit cannot bound it).
std::optional<double> RestoreRoom(const GuardPolicy& policy, const GuardDecision& d,
                                  const std::vector<GuardMetric>& registry) {
  double room = kInfinity;
  for (size_t i = 0; i < policy.ensurances.size(); ++i) {
    const ObjectiveEnsurance& rule = policy.ensurances[i];
    const GuardMetric* metric = Lookup(registry, rule.metric);
    if (rule.strategy == Strategy::kPreview || !metric || !metric->throttleable) continue;
    const EnsuranceReport& r = d.ensurances[i];
    if (!r.counted || r.below < rule.restore_threshold) return std::nullopt;
    if (metric->throttle_quantified) room = std::min(room, *r.room);
  }
  return room;
}

void ReportMissing(GuardDecision& d, GuardState& state) {
  std::set<std::string> missing;
  for (const EnsuranceReport& r : d.ensurances) {
    if (r.missing) missing.insert(r.metric);
  }
  for (const std::string& m : missing) {
    if (!state.missing_metrics.contains(m)) d.newly_missing_metrics.push_back(m);
  }
  d.missing_metrics.assign(missing.begin(), missing.end());
  state.missing_metrics = std::move(missing);
}

}  // namespace

std::vector<GuardCandidate> SelectCandidates(const std::vector<GuardPod>& pods,
                                             const CandidateOptions& options) {
  std::vector<GuardCandidate> out;
  out.reserve(pods.size());
  for (const GuardPod& p : pods) {
    // qrm's QoS level names (common/protocol_keys.h, kQosLevelKey).
    CandidateClass cls = CandidateClass::kReclaimed;
    if (p.qos_level == "shared_cores" && options.shared_cores) {
      cls = CandidateClass::kShared;
    } else if (p.qos_level != "reclaimed_cores") {
      continue;  // dedicated_cores, system_cores, unknown: never
    }
    if (options.Skipped(p.candidate.pod_namespace, p.candidate.pod_name)) continue;
    out.push_back(p.candidate);
    out.back().cls = cls;
  }
  return out;
}

GuardDecision DecideRound(const GuardPolicy& policy, const RoundInput& input, GuardState& state,
                          const GuardTimings& timings, const std::vector<GuardMetric>& registry) {
  GuardDecision d;
  Prune(policy, input, state);
  std::vector<Fired> applied, previewed;
  for (const ObjectiveEnsurance& rule : policy.ensurances) {
    const GuardMetric* metric = Lookup(registry, rule.metric);
    EnsuranceReport r = Measure(rule, metric, input, timings);
    const auto sample = input.samples.find(rule.metric);
    const int64_t sample_s = sample == input.samples.end() ? 0 : sample->second.time_s;
    Count(rule, sample_s, state.counters[rule.name], r);
    if (r.fired) (r.preview ? previewed : applied).push_back({&rule, metric, *r.gap});
    d.ensurances.push_back(std::move(r));
  }
  ReportMissing(d, state);
  Candidates candidates;
  if (!applied.empty() || !previewed.empty()) Eligible(input, policy, state, candidates);
  const PassContext ctx{policy, input, registry, candidates};
  if (!applied.empty()) Act(ctx, applied, false, state.throttled, state.sequence, state, d);
  if (!state.throttled.empty()) {
    if (const std::optional<double> room = RestoreRoom(policy, d, registry)) {
      QuotaPlan up = PlanRestore(*room, policy.throttle, state.throttled);
      for (QuotaChange& c : up.changes) d.quota_changes.push_back(std::move(c));
    }
  }
  if (!previewed.empty()) {
    ThrottledPods throttled = state.throttled;  // a copy: a preview changes nothing
    uint64_t sequence = state.sequence;
    Act(ctx, previewed, true, throttled, sequence, state, d);
  }
  return d;
}

}  // namespace qrm::advisor::guard
