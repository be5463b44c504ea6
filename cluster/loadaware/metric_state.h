// A NodeMetric as the cache keeps it (nodeInfo.AddOrUpdateNodeMetric, pod_assign_cache.go):
// every usage vectorized once, when the metric arrives, so requests only add vectors.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "cluster/loadaware/inputs.h"
#include "cluster/loadaware/resource_vector.h"
#include "common/status.h"

namespace qrm::cluster::loadaware {

// DefaultNodeMetricReportInterval, when spec.metricCollectPolicy.reportIntervalSeconds is unset.
inline constexpr std::chrono::seconds kDefaultReportInterval{60};
// qrm: a report interval outside [0, one year] is refused as bad input.
inline constexpr int64_t kMaxReportIntervalSeconds = 366 * 24 * 3600;

struct MetricState {
  std::optional<TimePoint> update_time;  // status.updateTime
  std::chrono::nanoseconds report_interval{kDefaultReportInterval};
  bool has_node_metric = false;  // status.nodeMetric is set (not a cold start)
  ResourceVector node_usage{};
  ResourceVector system_usage{};
  // Aggregated usage by (type, duration). Duration 0 holds, per type, the longest duration
  // reported with a non-empty list; lists that are empty are not kept.
  std::map<std::pair<std::string, std::chrono::seconds>, ResourceVector> aggregated;
  struct PodUsage {
    ResourceVector usage{};
    bool prod = false;  // some entry of the pod says koord-prod
  };
  // By "namespace/name"; entries with an empty usage list are not kept (the pod counts as
  // not reported yet).
  std::unordered_map<std::string, PodUsage> pods;
  // qrm's input checks, reported for the node when its usage is used: a vectorized quantity
  // negative or above kMaxQuantity, a node or aggregated usage list without cpu or memory
  // (which would make the node look idle), a report interval outside its bounds.
  Status error;

  // getTargetAggregatedUsage: the (type, duration) usage; with duration 0 and nothing kept,
  // the node usage. nullptr when there is none.
  const ResourceVector* AggregatedTarget(const std::string& type,
                                         std::chrono::seconds duration) const;
};

MetricState BuildMetricState(const NodeMetricInput& metric, const Vectorizer& vectorizer);

// "namespace/name", the key NodeMetric and the cache share for a pod.
inline std::string PodKey(std::string_view namespace_, std::string_view name) {
  std::string key;
  key.reserve(namespace_.size() + 1 + name.size());
  key.append(namespace_).append("/").append(name);
  return key;
}

}  // namespace qrm::cluster::loadaware
