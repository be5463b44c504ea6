// One node as the cache knows it: its Node object, its NodeMetric and the pods assigned to it
// (Koordinator's nodeInfo of pod_assign_cache.go, with the node's allocatable and filter
// profile added), and the sums a request needs, recomputed at every event on the node.
//
// Which assigned pods are estimated on top of the reported usage ("recent" pods): a pod with
// an estimate is, when
//   the NodeMetric does not report it (no usage list for its namespace/name), or
//   it was assigned strictly after updateTime - reportInterval (its PodScheduled time, else
//     the time the cache was told), or
//   its estimation deadline is strictly after updateTime.
// All relative to the metric's updateTime, never to "now": a pod stops being recent only when
// a newer NodeMetric arrives, and that event recomputes the sums.
//   node delta     = sum over recent pods of max(0, estimate - reported usage) per resource
//   node estimated = sum over all pods of their estimate
//   prod usage     = (system usage, with prodUsageIncludeSys) + usage of the pods that are
//                    prod both by their priority and in the metric
//   prod delta     = as the node delta over prod pods, a prod pod the metric does not call
//                    prod counting whole
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/loadaware/config.h"
#include "cluster/loadaware/metric_state.h"
#include "cluster/loadaware/profile.h"
#include "cluster/loadaware/resource_vector.h"
#include "common/status.h"

namespace qrm::cluster::loadaware {

// qrm: more pods than this on one node is refused, so that no sum can overflow.
inline constexpr size_t kMaxPodsPerNode = 4096;

// podAssignInfo.
struct AssignedPod {
  std::string key;  // namespace/name
  std::string uid;
  TimePoint timestamp;                      // PodScheduled time, else when assigned
  std::optional<ResourceVector> estimated;  // nullopt: no estimate (all zero)
  std::optional<TimePoint> deadline;        // estimated at least until then
  bool prod = false;
  uint64_t fingerprint = 0;  // spec and conditions, to skip updates that change neither
  Status error;              // qrm: bad quantities in the pod
};

// The Node object, as the filter and score read it.
struct NodeSpecState {
  ResourceVector allocatable{};
  Status allocatable_error;                  // qrm: cpu or memory missing or 0, bad values
  std::optional<FilterProfile> own_profile;  // from the usage-thresholds annotation
  Status profile_error;                      // qrm: bad usage-thresholds annotation
};

// The parts of a node's load, for inspection and tests.
struct NodeLoadParts {
  ResourceVector node_usage{}, prod_usage{}, node_delta{}, prod_delta{}, node_estimated{};
  std::vector<std::string> delta_pods;  // pods in the node delta (namespace/name)
  std::vector<std::string> prod_delta_pods;
  std::vector<std::string> estimated_pods;
};

class NodeLoad {
 public:
  void SetSpec(NodeSpecState spec, const Config& config);
  void ClearSpec(const Config& config);
  void SetMetric(MetricState metric, const Config& config);
  void ClearMetric(const Config& config);
  void PutPod(AssignedPod pod, const Config& config);
  void ErasePod(const std::string& uid, const Config& config);

  const AssignedPod* FindPod(const std::string& uid) const;
  // Nothing is known of the node any more: the cache drops it.
  bool Unused() const { return !spec_ && !metric_ && pods_.empty(); }

  const NodeSpecState* spec() const { return spec_ ? &*spec_ : nullptr; }
  const MetricState* metric() const { return metric_ ? &*metric_ : nullptr; }
  const FilterProfile& profile(const Config& config) const;
  size_t pod_count() const { return pods_.size(); }

  // The estimated usage of the node before the incoming pod; valid with a metric.
  const ResourceVector& plain_usage() const { return plain_usage_; }  // usage + delta
  const ResourceVector& prod_usage() const { return prod_sum_; }      // prod usage + delta
  // Filter and score on aggregated usage: target + delta, or the node estimated when the
  // metric has no such target.
  const ResourceVector& filter_aggregated_usage() const { return filter_agg_usage_; }
  const ResourceVector& score_aggregated_usage() const { return score_agg_usage_; }
  // The first error of the metric or of a pod.
  const Status& load_error() const { return load_error_; }

  NodeLoadParts Parts(const Config& config) const;

 private:
  void Recompute(const Config& config);
  void AddPod(const AssignedPod& pod, NodeLoadParts& parts, bool names) const;
  bool ShouldEstimate(const AssignedPod& pod, const ResourceVector* usage) const;

  std::optional<NodeSpecState> spec_;
  std::optional<MetricState> metric_;
  // nodeInfo.updateTime: kept when a later metric has none, forgotten when the node empties.
  std::optional<TimePoint> update_time_;
  std::map<std::string, AssignedPod> pods_;  // by uid

  ResourceVector plain_usage_{}, prod_sum_{}, filter_agg_usage_{}, score_agg_usage_{};
  Status load_error_;
};

}  // namespace qrm::cluster::loadaware
