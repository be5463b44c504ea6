// BuildNodeMetric: the NodeMetric status this node reports (docs/node-report.md), from the
// advisor's metric store and predictions, the way Koordinator's koordlet fills it:
//  * nodeUsage / systemUsage: the average over the aggregation window (300 s);
//  * aggregatedNodeUsages / aggregatedSystemUsages: avg, p50, p90, p95, p99 over each duration
//    (5, 10, 30 minutes); a duration whose samples cover less than half of it is left out
//    (cold start: a figure from a few samples would pass for the whole window);
//  * podsMetric: each pod's average over the window (the sum of its containers'), sorted by
//    namespace and name, with Koordinator's priority and QoS class for its qrm QoS level;
//  * prodReclaimableMetric / prodPeakMetric: from the predictor (capacity - predicted peak of
//    the protected usage, and that peak); an empty reclaimable before the first prediction,
//    as koordlet writes it.
// CPU is written in millicores (DecimalSI), memory in bytes (BinarySI), truncated as koordlet
// does. Pure: the caller reads the agent's state under its lock and calls this.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "advisor/predict/peak_model.h"
#include "advisor/store/metric_store.h"
#include "cluster/objects/node_metric.h"

namespace qrm::advisor {

struct ReportPod {
  std::string name, namespace_;
  std::string qos_level;                               // qrm's ("dedicated_cores", ...; "" unknown)
  std::vector<std::string> cpu_series, memory_series;  // its containers' series in the store
};

struct NodeReportInput {
  std::string node_name;
  int64_t now = 0;  // Unix seconds
  std::string node_cpu_series, node_memory_series, system_cpu_series, system_memory_series;
  std::vector<ReportPod> pods;
  double cpu_capacity = 0, memory_capacity = 0;  // cores, bytes (0: unknown)
  Prediction cpu, memory;
};

struct NodeReportOptions {
  int64_t aggregate_duration_s = 300;  // Koordinator's aggregateDurationSeconds
  std::vector<int64_t> aggregated_durations_s = {300, 600, 1800};
  double cold_start_ratio = 0.5;  // a window must be this much covered to be reported
};

// Koordinator's priority class and QoS class for a qrm QoS level: reclaimed_cores is
// koord-batch/BE; dedicated_cores koord-prod/LSR; shared_cores koord-prod/LS; system_cores
// koord-prod/SYSTEM; unknown ("") koord-prod/LS, the protected side.
std::string KoordPriority(const std::string& qos_level);
std::string KoordQos(const std::string& qos_level);

// nullopt when the node itself has no sample in the window (nothing true to report).
std::optional<cluster::NodeMetricStatus> BuildNodeMetric(const MetricStore& store,
                                                         const NodeReportInput& input,
                                                         const NodeReportOptions& options);

}  // namespace qrm::advisor
