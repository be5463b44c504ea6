#include "cluster/loadaware/args.h"

#include <array>
#include <set>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cluster/loadaware/resource_vector.h"
#include "cluster/loadaware/types.h"

namespace qrm::cluster::loadaware {
namespace {

void AddDefaults(ResourceFactors& factors, const ResourceFactors& defaults) {
  for (const auto& [name, value] : defaults) factors.emplace(name, value);
}

// validateResourceThresholds: every percent in [0, 100]. Go walks the map in random order and
// reports the first bad entry; we walk it sorted, so the report is stable.
std::optional<std::string> ThresholdError(const ResourceFactors& thresholds) {
  for (const auto& [name, percent] : thresholds) {
    if (percent < 0) {
      return fmt::format("resource threshold of {} should be a positive value, got {}", name,
                         percent);
    }
    if (percent > 100) {
      return fmt::format("resource threshold of {} should be less than 100, got {}", name, percent);
    }
  }
  return std::nullopt;
}

// validateResourceWeights and validateEstimatedScalingFactors: every value in [1, 100].
std::optional<std::string> PositiveUpTo100Error(const ResourceFactors& values,
                                                std::string_view what) {
  for (const auto& [name, value] : values) {
    if (value <= 0) {
      return fmt::format("{} of {} should be a positive value, got {}", what, name, value);
    }
    if (value > 100) {
      return fmt::format("{} of {} should be less than 100, got {}", what, name, value);
    }
  }
  return std::nullopt;
}

void CheckAggregated(const AggregatedArgs& agg, std::vector<std::string>& errors) {
  if (auto e = ThresholdError(agg.usage_thresholds)) {
    errors.push_back("aggregated.usageThresholds: " + *e);
  }
  const auto check_type = [&](const std::string& type, std::string_view field) {
    if (!type.empty() && !IsAggregationType(type)) {
      errors.push_back(fmt::format(
          "aggregated.{}: unsupported value \"{}\" (supported: avg, p50, p90, p95, p99)", field,
          type));
    }
  };
  const auto check_duration = [&](std::chrono::seconds d, std::string_view field) {
    if (d.count() < 0) {
      errors.push_back(fmt::format("aggregated.{}: {}s: duration must be >= 0", field, d.count()));
    } else if (d.count() > kMaxDurationSeconds) {
      errors.push_back(
          fmt::format("aggregated.{}: {}s: qrm: above {}s", field, d.count(), kMaxDurationSeconds));
    }
  };
  check_type(agg.usage_aggregation_type, "usageAggregationType");
  check_duration(agg.usage_aggregated_duration, "usageAggregatedDuration");
  check_type(agg.score_aggregation_type, "scoreAggregationType");
  check_duration(agg.score_aggregated_duration, "scoreAggregatedDuration");
}

// qrm's own limits: every resource name the arguments use becomes a vector slot.
void CheckResourceNames(const LoadAwareArgs& args, std::vector<std::string>& errors) {
  std::set<std::string> names = {std::string(kCpu), std::string(kMemory)};
  const auto add = [&](const ResourceFactors& m, std::string_view field) {
    for (const auto& [name, value] : m) {
      if (name.empty()) errors.push_back(fmt::format("{}: qrm: empty resource name", field));
      names.insert(name);
    }
  };
  add(args.usage_thresholds, "usageThresholds");
  add(args.prod_usage_thresholds, "prodUsageThresholds");
  if (args.aggregated) add(args.aggregated->usage_thresholds, "aggregated.usageThresholds");
  add(args.resource_weights, "resourceWeights");
  add(args.estimated_scaling_factors, "estimatedScalingFactors");
  for (const std::string& name : args.supported_resources) {
    if (name.empty()) errors.emplace_back("supportedResources: qrm: empty resource name");
    names.insert(name);
  }
  if (names.size() > kMaxResources) {
    errors.push_back(fmt::format("resource names: qrm: {} distinct names, at most {} supported",
                                 names.size(), kMaxResources));
  }
}

void CheckSeconds(const std::optional<int64_t>& seconds, std::string_view field,
                  std::vector<std::string>& errors) {
  if (seconds && *seconds > kMaxDurationSeconds) {
    errors.push_back(
        fmt::format("{}: {}: qrm: above {} seconds", field, *seconds, kMaxDurationSeconds));
  }
}

}  // namespace

bool IsAggregationType(std::string_view type) {
  static constexpr std::array<std::string_view, 5> kTypes = {"avg", "p50", "p90", "p95", "p99"};
  for (std::string_view t : kTypes) {
    if (t == type) return true;
  }
  return false;
}

void SetDefaults(LoadAwareArgs& args) {
  if (!args.filter_expired_node_metrics) args.filter_expired_node_metrics = true;
  if (!args.enable_schedule_when_node_metrics_expired) {
    args.enable_schedule_when_node_metrics_expired = false;
  }
  if (!args.node_metric_expiration_seconds) args.node_metric_expiration_seconds = 180;
  if (args.resource_weights.empty() && args.dominant_resource_weight == 0) {
    args.resource_weights = {{std::string(kCpu), 1}, {std::string(kMemory), 1}};
  }
  if (args.usage_thresholds.empty()) {
    args.usage_thresholds = {{std::string(kCpu), 65}, {std::string(kMemory), 95}};
  }
  AddDefaults(args.estimated_scaling_factors,
              {{std::string(kCpu), 85}, {std::string(kMemory), 70}});
}

LoadAwareArgs DefaultArgs() {
  LoadAwareArgs args;
  SetDefaults(args);
  return args;
}

Status Validate(const LoadAwareArgs& args) {
  std::vector<std::string> errors;
  // Koordinator's field path here is "nodeMetricExpiredSeconds".
  if (args.node_metric_expiration_seconds && *args.node_metric_expiration_seconds <= 0) {
    errors.push_back(fmt::format("nodeMetricExpirationSeconds: {}: should be a positive value",
                                 *args.node_metric_expiration_seconds));
  }
  CheckSeconds(args.node_metric_expiration_seconds, "nodeMetricExpirationSeconds", errors);
  if (auto e = PositiveUpTo100Error(args.resource_weights, "resource weight")) {
    errors.push_back("resourceWeights: " + *e);
  }
  if (args.dominant_resource_weight < 0) {
    errors.push_back(fmt::format("dominantResourceWeight: {}: should not be a negative value",
                                 args.dominant_resource_weight));
  }
  if (args.dominant_resource_weight > 100) {
    errors.push_back(fmt::format("dominantResourceWeight: {}: should be less than 100",
                                 args.dominant_resource_weight));
  }
  if (auto e = ThresholdError(args.usage_thresholds)) errors.push_back("usageThresholds: " + *e);
  if (auto e = PositiveUpTo100Error(args.estimated_scaling_factors, "estimated scaling factor")) {
    errors.push_back("estimatedScalingFactors: " + *e);
  }
  // Koordinator reports only the first weighted resource without a factor.
  for (const auto& [name, weight] : args.resource_weights) {
    if (!args.estimated_scaling_factors.contains(name)) {
      errors.push_back(
          fmt::format("estimatedScalingFactors: not found: \"{}\" (it has a "
                      "resource weight)",
                      name));
      break;
    }
  }
  if (args.aggregated) CheckAggregated(*args.aggregated, errors);
  CheckSeconds(args.estimated_seconds_after_pod_scheduled, "estimatedSecondsAfterPodScheduled",
               errors);
  CheckSeconds(args.estimated_seconds_after_initialized, "estimatedSecondsAfterInitialized",
               errors);
  CheckResourceNames(args, errors);
  if (errors.empty()) return Status::Ok();
  return InvalidArgumentError(fmt::format("LoadAwareSchedulingArgs: {}", fmt::join(errors, "; ")));
}

}  // namespace qrm::cluster::loadaware
