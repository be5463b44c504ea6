// What the decision core is told about the cluster: a node, its NodeMetric and its pods, as
// plain structs. The wire layer converts the Kubernetes objects (and parses the JSON
// annotations) into these; each field names the object field or annotation it comes from.
// Annotations whose text does not parse are passed as absent: Koordinator then logs and uses
// the plugin arguments, and so does this library.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/loadaware/types.h"

namespace qrm::cluster::loadaware {

// ---- Node ----------------------------------------------------------------------------------

// extension.CustomAggregatedUsage.
struct CustomAggregatedUsage {
  std::map<std::string, int64_t> usage_thresholds;  // usageThresholds (percent)
  std::string usage_aggregation_type;               // usageAggregationType: avg, p50, ...
  std::optional<std::chrono::seconds> usage_aggregated_duration;  // usageAggregatedDuration
};

// extension.CustomUsageThresholds: the node annotation scheduling.koordinator.sh/usage-thresholds.
struct CustomUsageThresholds {
  std::map<std::string, int64_t> usage_thresholds;        // usageThresholds
  std::map<std::string, int64_t> prod_usage_thresholds;   // prodUsageThresholds
  std::optional<CustomAggregatedUsage> aggregated_usage;  // aggregatedUsage
};

struct NodeInput {
  std::string name;
  ResourceList allocatable;  // status.allocatable
  // Annotation node.koordinator.sh/raw-allocatable (a ResourceList); overrides allocatable.
  std::optional<ResourceList> raw_allocatable;
  // Annotation scheduling.koordinator.sh/usage-thresholds.
  std::optional<CustomUsageThresholds> custom_usage_thresholds;
};

// ---- NodeMetric (slo.koordinator.sh/v1alpha1) ----------------------------------------------

// One entry of status.nodeMetric.aggregatedNodeUsages: usage per aggregation type ("avg",
// "p50", "p90", "p95", "p99") over `duration`.
struct AggregatedUsage {
  std::chrono::seconds duration{0};
  std::map<std::string, ResourceList> usage;
};

// status.nodeMetric.
struct NodeMetricInfo {
  ResourceList node_usage;    // nodeUsage.resources
  ResourceList system_usage;  // systemUsage.resources
  std::vector<AggregatedUsage> aggregated_node_usages;
};

// One entry of status.podsMetric.
struct PodMetric {
  std::string namespace_;
  std::string name;
  std::string priority;  // koord-prod, koord-mid, koord-batch, koord-free or ""
  ResourceList usage;    // podUsage.resources
};

struct NodeMetricInput {
  std::string node_name;                           // metadata.name
  std::optional<int64_t> report_interval_seconds;  // spec.metricCollectPolicy.reportIntervalSeconds
  std::optional<TimePoint> update_time;            // status.updateTime
  std::optional<NodeMetricInfo> node_metric;       // status.nodeMetric
  std::vector<PodMetric> pods_metric;              // status.podsMetric
};

// ---- Pod -----------------------------------------------------------------------------------

struct ContainerResources {
  ResourceList requests;
  ResourceList limits;
};

struct InitContainer {
  ContainerResources resources;
  bool restartable = false;  // restartPolicy: Always (a sidecar)
};

enum class PodPhase { kPending, kRunning, kSucceeded, kFailed, kUnknown };

struct PodInput {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string node_name;  // spec.nodeName

  // Metadata.
  std::optional<std::string> priority_class_label;  // label koordinator.sh/priority-class
  std::optional<std::string> qos_class_label;       // label koordinator.sh/qosClass
  bool owned_by_daemonset = false;                  // an ownerReference of kind DaemonSet
  bool reserve_pod = false;  // annotation scheduling.koordinator.sh/reserve-pod is "true"
  // Annotation scheduling.koordinator.sh/load-estimated-scaling-factors ({"cpu": 100}).
  std::optional<std::map<std::string, int64_t>> custom_scaling_factors;
  // Annotations scheduling.koordinator.sh/load-estimated-seconds-after-pod-scheduled and
  // ...-after-initialized, as written (parsed here as strconv.ParseInt(s, 10, 64) does).
  std::string custom_seconds_after_pod_scheduled;
  std::string custom_seconds_after_initialized;

  // Spec.
  std::optional<int32_t> priority;  // spec.priority
  std::vector<ContainerResources> containers;
  std::vector<InitContainer> init_containers;
  ResourceList overhead;                                  // spec.overhead
  std::optional<ContainerResources> pod_level_resources;  // spec.resources

  // Status.
  PodPhase phase = PodPhase::kPending;
  std::string qos_class;  // status.qosClass: Guaranteed, Burstable, BestEffort or ""
  // lastTransitionTime of the PodScheduled and Initialized conditions, each set only when the
  // condition's status is True and the time is not zero.
  std::optional<TimePoint> scheduled_time;
  std::optional<TimePoint> initialized_time;
};

}  // namespace qrm::cluster::loadaware
