#include "advisor/guard/precise_plan.h"

#include <algorithm>
#include <cmath>

namespace qrm::advisor::guard {
namespace {

constexpr double kMinQuotaCores = 0.01;
// Releases and increases below this are rounding, not CPU.
constexpr double kNegligible = 1e-9;

// The quota `steps` steps below `base`, never below `floor`.
double Lowered(double base, double step_ratio, double floor, double target) {
  if (step_ratio >= 1) return floor;
  // The fewest whole steps (at least one) that reach `target`: base * (1 - s)^k <= target.
  double steps = 1;
  if (target > 0 && target < base) {
    steps = std::max(1.0, std::ceil(std::log(target / base) / std::log1p(-step_ratio) - 1e-9));
  } else if (target <= 0) {
    return floor;
  }
  return std::max(base * std::pow(1 - step_ratio, steps), floor);
}

}  // namespace

std::optional<double> GapAbove(std::optional<double> usage, double watermark) {
  if (!usage || !std::isfinite(*usage)) return std::nullopt;
  return std::max(*usage - watermark, 0.0);
}

std::optional<double> RoomBelow(std::optional<double> usage, double watermark, double margin) {
  if (!usage || !std::isfinite(*usage)) return std::nullopt;
  return std::max(watermark - margin - *usage, 0.0);
}

double QuotaFloor(const GuardCandidate& pod, const ThrottleOptions& options) {
  double floor = kMinQuotaCores;
  if (pod.cpu_limit) floor = std::max(floor, *pod.cpu_limit * options.min_cpu_ratio);
  if (!options.below_request) floor = std::max(floor, pod.cpu_request);
  return floor;
}

QuotaPlan PlanThrottleDown(const std::vector<GuardCandidate>& sorted, double gap,
                           const ThrottleOptions& options, ThrottledPods& throttled,
                           uint64_t& sequence) {
  std::vector<const GuardCandidate*> view;
  view.reserve(sorted.size());
  for (const GuardCandidate& pod : sorted) view.push_back(&pod);
  return PlanThrottleDown(view, gap, options, throttled, sequence);
}

QuotaPlan PlanThrottleDown(const std::vector<const GuardCandidate*>& sorted, double gap,
                           const ThrottleOptions& options, ThrottledPods& throttled,
                           uint64_t& sequence) {
  QuotaPlan plan;
  plan.remaining = gap;
  for (const GuardCandidate* each : sorted) {
    const GuardCandidate& pod = *each;
    if (plan.remaining <= kNegligible) break;
    if (!pod.cpu_usage) continue;  // its release cannot be counted
    const double usage = *pod.cpu_usage;
    const auto held = throttled.find(pod.Key());
    const std::optional<double> current =
        held == throttled.end() ? std::nullopt : std::optional<double>(held->second.quota);
    // Not yet throttled: the first step is taken from what it uses, so it releases at once.
    const double base = current ? *current : std::min(usage, pod.cpu_limit.value_or(usage));
    const double floor = QuotaFloor(pod, options);
    if (base <= floor) continue;
    const double quota = Lowered(base, options.step_ratio, floor, usage - plan.remaining);
    const double released = usage - quota;
    if (released <= kNegligible) continue;  // it uses less than the lower quota: no help now
    plan.changes.push_back({pod.Key(), current, quota, released});
    plan.remaining -= released;
    ThrottledPod& record = throttled[pod.Key()];
    if (!current) {
      record.ceiling = pod.cpu_limit.value_or(usage);
      record.sequence = sequence++;
    }
    record.pod = pod;
    record.quota = quota;
  }
  plan.remaining = std::max(plan.remaining, 0.0);
  return plan;
}

QuotaPlan PlanRestore(double room, const ThrottleOptions& options, ThrottledPods& throttled) {
  std::vector<ThrottledPod*> newest_first;
  for (auto& [key, record] : throttled) newest_first.push_back(&record);
  std::sort(newest_first.begin(), newest_first.end(),
            [](const ThrottledPod* a, const ThrottledPod* b) { return a->sequence > b->sequence; });
  QuotaPlan plan;
  plan.remaining = room;
  std::vector<std::string> released;
  for (ThrottledPod* record : newest_first) {
    const double next = record->quota * (1 + options.step_ratio);
    const bool release = next >= record->ceiling;
    const double raised = release ? record->ceiling : next;
    const double added = std::max(raised - record->quota, 0.0);
    if (added > plan.remaining + kNegligible) break;  // the order holds: newest first
    plan.remaining -= added;
    const std::string key = record->pod.Key();
    plan.changes.push_back(
        {key, record->quota, release ? std::nullopt : std::optional<double>(raised), added});
    if (release) {
      released.push_back(key);
    } else {
      record->quota = raised;
    }
  }
  for (const std::string& key : released) throttled.erase(key);
  plan.remaining = std::max(plan.remaining, 0.0);
  return plan;
}

EvictPlan PlanEviction(const std::vector<GuardCandidate>& sorted, const GuardMetric& metric,
                       double gap, int max_pods, const std::vector<std::string>& excluded) {
  EvictPlan plan;
  plan.remaining = gap;
  for (const GuardCandidate& pod : sorted) {
    if (plan.remaining <= kNegligible || static_cast<int>(plan.pods.size()) >= max_pods) break;
    const std::string key = pod.Key();
    if (std::find(excluded.begin(), excluded.end(), key) != excluded.end()) continue;
    const std::optional<double> usage = metric.pod_usage ? metric.pod_usage(pod) : std::nullopt;
    if (!usage || *usage <= kNegligible) continue;  // evicting it would release nothing known
    plan.pods.push_back(key);
    plan.remaining -= *usage;
  }
  plan.remaining = std::max(plan.remaining, 0.0);
  return plan;
}

}  // namespace qrm::advisor::guard
