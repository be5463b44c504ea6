// The guard's metric registry (the precise-execution document's metric attributes): for each
// node metric a watermark may name, whether pods can be sorted, throttled and evicted for it,
// whether what an action releases can be quantified, and the per-metric functions.
//
//   cpu_total_usage     node CPU in cores: sorted by CPU usage, throttle- and evict-quantified
//   memory_total_usage  node memory working set in bytes: sorted by memory usage, evictable and
//                       evict-quantified, not throttleable (memory has no quota to lower)
//
// A new metric is one more entry in Metrics() (guard_metrics.cc) with its functions.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "advisor/guard/guard_candidate.h"
#include "advisor/guard/guard_sorters.h"

namespace qrm::advisor::guard {

// The registered metrics' names, for the callers that sample them.
inline constexpr std::string_view kCpuTotalUsage = "cpu_total_usage";
inline constexpr std::string_view kMemoryTotalUsage = "memory_total_usage";

struct GuardMetric {
  std::string_view name;
  int action_priority = 0;  // 0 lowest .. 10 highest: acted on alone when others cannot be
  bool sortable = false;
  bool throttleable = false, throttle_quantified = false;
  bool evictable = false, evict_quantified = false;
  // The candidates' order for this metric (sortable) or GeneralSorter.
  PodOrder order;
  // What the pod uses of this metric now (what evicting it releases); none: not sampled.
  std::optional<double> (*pod_usage)(const GuardCandidate&) = nullptr;
};

// Every registered metric.
const std::vector<GuardMetric>& Metrics();

// The metric named `name`; nullptr when none is.
const GuardMetric* FindMetric(std::string_view name);

}  // namespace qrm::advisor::guard
