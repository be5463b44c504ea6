// LoadAwareSchedulingArgs (pkg/scheduler/apis/config/types.go), its defaults (v1/defaults.go,
// SetDefaults_LoadAwareSchedulingArgs) and its validation (validation/validation_pluginargs.go,
// ValidateLoadAwareSchedulingArgs). Field comments give the Koordinator argument name.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace qrm::cluster::loadaware {

// Resource name -> percent (thresholds), weight or scaling factor.
using ResourceFactors = std::map<std::string, int64_t>;

struct AggregatedArgs {
  ResourceFactors usage_thresholds;                   // usageThresholds
  std::string usage_aggregation_type;                 // usageAggregationType ("" = off)
  std::chrono::seconds usage_aggregated_duration{0};  // usageAggregatedDuration (0 = longest)
  std::string score_aggregation_type;                 // scoreAggregationType ("" = off)
  std::chrono::seconds score_aggregated_duration{0};  // scoreAggregatedDuration (0 = longest)
};

struct LoadAwareArgs {
  // filterExpiredNodeMetrics; default true. Koordinator marks it deprecated but still reads it.
  std::optional<bool> filter_expired_node_metrics;
  // nodeMetricExpirationSeconds; default 180.
  std::optional<int64_t> node_metric_expiration_seconds;
  // enableScheduleWhenNodeMetricsExpired; default false.
  std::optional<bool> enable_schedule_when_node_metrics_expired;
  // resourceWeights; default cpu 1, memory 1 (when empty and dominantResourceWeight is 0).
  ResourceFactors resource_weights;
  // dominantResourceWeight; default 0.
  int64_t dominant_resource_weight = 0;
  // usageThresholds; default cpu 65, memory 95 (when empty).
  ResourceFactors usage_thresholds;
  // prodUsageThresholds; default none (the prod filter is off).
  ResourceFactors prod_usage_thresholds;
  // prodUsageIncludeSys: prod usage starts from the node's system usage.
  bool prod_usage_include_sys = false;
  // scoreAccordingProdUsage: prod pods are scored on prod usage.
  bool score_according_prod_usage = false;
  // estimator: only "defaultEstimator" exists; any other name also selects it.
  std::string estimator;
  // estimatedScalingFactors; default cpu 85, memory 70 (missing ones are filled in).
  ResourceFactors estimated_scaling_factors;
  // estimatedSecondsAfterPodScheduled / estimatedSecondsAfterInitialized; no default (off).
  std::optional<int64_t> estimated_seconds_after_pod_scheduled;
  std::optional<int64_t> estimated_seconds_after_initialized;
  // allowCustomizeEstimation: read the estimation annotations of pods.
  bool allow_customize_estimation = false;
  // aggregated: filter and score on percentile usage.
  std::optional<AggregatedArgs> aggregated;
  // supportedResources: extra resource names for node custom thresholds.
  std::vector<std::string> supported_resources;
};

// SetDefaults_LoadAwareSchedulingArgs.
void SetDefaults(LoadAwareArgs& args);

// The defaults alone: what a scheduler configuration without plugin arguments runs with.
LoadAwareArgs DefaultArgs();

// What ValidateLoadAwareSchedulingArgs refuses, each error naming the field and the value,
// all errors joined by "; ". Additions of ours (they guard this implementation, and are marked
// "qrm:"): more than kMaxResources distinct resource names, an empty resource name, and
// durations in seconds beyond kMaxDurationSeconds, where Go's time.Duration would wrap.
Status Validate(const LoadAwareArgs& args);

// Whether `type` is one of the aggregation types Koordinator accepts (avg, p50, p90, p95, p99).
bool IsAggregationType(std::string_view type);

}  // namespace qrm::cluster::loadaware
