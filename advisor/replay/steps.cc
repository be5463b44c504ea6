#include "advisor/replay/steps.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "advisor/predict/peak_model.h"
#include "advisor/usage/stats.h"

namespace qrm::advisor {
namespace {

struct StepValue {
  double representative = 0;
  double max = 0;
};

// One series' steps, keyed by step end time.
std::map<int64_t, StepValue> SeriesSteps(const std::vector<RawSample>& samples, int64_t t0,
                                         const StepRules& rules) {
  std::map<int64_t, std::vector<double>> by_step;
  for (const RawSample& s : samples) {
    by_step[t0 + FloorToMultiple(s.time - t0, rules.step_s) + rules.step_s].push_back(s.value);
  }
  std::map<int64_t, StepValue> out;
  for (auto& [end, values] : by_step) {
    const double max = *std::max_element(values.begin(), values.end());
    out[end] = StepValue{NearestRank(values, rules.quantile), max};
  }
  return out;
}

int64_t FirstTime(const MachineSeries& m) {
  int64_t first = INT64_MAX;
  for (const RawSample& s : m.node) first = std::min(first, s.time);
  for (const SeriesData& p : m.pods) {
    for (const RawSample& s : p.samples) first = std::min(first, s.time);
  }
  return first;
}

}  // namespace

StatusOr<std::vector<Observation>> FormSteps(const MachineSeries& machine, double capacity,
                                             const StepRules& rules) {
  if (rules.step_s < 1) {
    return InvalidArgumentError(fmt::format("step: invalid value {} s (>= 1 s)", rules.step_s));
  }
  if (!(rules.quantile > 0 && rules.quantile <= 1)) {
    return InvalidArgumentError(
        fmt::format("step quantile: invalid value {} (0 < q <= 1)", rules.quantile));
  }
  if (!(capacity > 0) || !std::isfinite(capacity)) {
    return InvalidArgumentError(
        fmt::format("machine {}: capacity: invalid value {} (> 0)", machine.machine, capacity));
  }
  const int64_t first = FirstTime(machine);
  if (first == INT64_MAX) return std::vector<Observation>{};
  const int64_t t0 = FloorToMultiple(first, rules.step_s);

  std::map<int64_t, Observation> steps;
  std::vector<int64_t> node_steps;
  for (const auto& [end, v] : SeriesSteps(machine.node, t0, rules)) {
    Observation& o = steps[end];
    o.node = v.representative;
    o.node_max = v.max;
    node_steps.push_back(end);
  }
  const bool node_from_pods = machine.node.empty();
  for (const SeriesData& pod : machine.pods) {
    const int64_t started = pod.samples.empty() ? 0 : pod.samples.front().time;
    for (const auto& [end, v] : SeriesSteps(pod.samples, t0, rules)) {
      Observation& o = steps[end];
      o.pods.push_back(PodUsage{pod.pod, pod.priority.value_or(PriorityClass::kProd),
                                pod.request.value_or(0), v.representative, v.max, started});
      if (node_from_pods) {
        // The node's highest sample is unknown: Prod pods count their maxima (the protected
        // peak is theirs), the reclaimed pods their representative samples, which
        // ProtectedMax subtracts again.
        o.node += v.representative;
        o.node_max += IsProtected(o.pods.back().priority) ? v.max : v.representative;
      }
    }
  }
  std::vector<Observation> out;
  out.reserve(steps.size());
  for (auto& [end, o] : steps) {
    // With machine-level samples, a step without one has no node usage to speak of.
    if (!node_from_pods && !std::binary_search(node_steps.begin(), node_steps.end(), end)) {
      continue;
    }
    o.time = end;
    o.capacity = capacity;
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace qrm::advisor
