// Koordinator's NodeMetric (slo.koordinator.sh/v1alpha1, cluster scoped, one per node, named
// after it): what a node agent reports of the node's and its pods' usage, for the load-aware
// scheduler and the colocation controllers. Field for field the upstream Go types
// (apis/slo/v1alpha1/nodemetric_types.go); node_metric_json.h reads and writes their JSON.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/objects/object_meta.h"
#include "common/quantity.h"

namespace qrm::cluster {

inline constexpr const char* kNodeMetricApiVersion = "slo.koordinator.sh/v1alpha1";
inline constexpr const char* kNodeMetricKind = "NodeMetric";
inline constexpr const char* kNodeMetricsPath = "/apis/slo.koordinator.sh/v1alpha1/nodemetrics";

// corev1.ResourceList: resource name ("cpu", "memory", ...) -> quantity.
using ResourceList = std::map<std::string, Quantity>;

// ResourceMap: a ResourceList under "resources". Koordinator adds "devices" (GPU usage);
// qrm writes none, and reading keeps only how many there were.
struct ResourceMap {
  ResourceList resources;
  size_t devices = 0;
};

// AggregatedUsage: usage aggregated over `duration`, per aggregation type ("avg", "p50",
// "p90", "p95", "p99").
struct AggregatedUsage {
  std::map<std::string, ResourceMap> usage;
  int64_t duration_ns = 0;
};

struct NumaUsage {
  int32_t numa_node_id = 0;
  ResourceMap node_usage;
  ResourceMap system_usage;
};

struct NodeMetricInfo {
  ResourceMap node_usage;
  std::vector<AggregatedUsage> aggregated_node_usages;
  ResourceMap system_usage;
  std::vector<AggregatedUsage> aggregated_system_usages;
  std::vector<NumaUsage> numa_usages;
};

struct PodMetricInfo {
  std::string name;
  std::string namespace_;
  ResourceMap pod_usage;
  std::string priority;  // koord-prod, koord-mid, koord-batch, koord-free, or ""
  std::string qos;       // LSE, LSR, LS, BE, SYSTEM, or ""
};

struct HostApplicationMetricInfo {
  std::string name;
  ResourceMap usage;
  std::string priority;
  std::string qos;
};

struct NodeMetricCollectPolicy {
  std::optional<int64_t> aggregate_duration_seconds;
  std::optional<int64_t> report_interval_seconds;
  std::optional<std::vector<int64_t>> node_aggregate_durations_ns;  // nodeAggregatePolicy
  std::optional<std::string> node_memory_collect_policy;
};

struct NodeMetricStatus {
  std::optional<int64_t> update_time;  // Unix seconds
  std::optional<NodeMetricInfo> node_metric;
  std::vector<PodMetricInfo> pods_metric;
  std::vector<HostApplicationMetricInfo> host_application_metric;
  std::optional<ResourceMap> prod_reclaimable_metric;  // ReclaimableMetric.resource
  std::optional<ResourceMap> prod_peak_metric;         // PeakMetric.resource
};

struct NodeMetric {
  ObjectMeta metadata;
  std::optional<NodeMetricCollectPolicy> collect_policy;  // spec.metricCollectPolicy
  NodeMetricStatus status;
};

}  // namespace qrm::cluster
