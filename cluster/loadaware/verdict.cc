#include "cluster/loadaware/verdict.h"

#include <fmt/format.h>

#include "cluster/loadaware/types.h"

namespace qrm::cluster::loadaware {

std::string FilterVerdict::KoordinatorReason() const {
  switch (path) {
    case FilterPath::kMetricExpired: return "node(s) nodeMetric expired";
    case FilterPath::kUsageExceeds:
      return fmt::format("node(s) {} usage exceed threshold", resource);
    case FilterPath::kAggregatedUsageExceeds:
      return fmt::format("node(s) {} aggregated usage exceed threshold", resource);
    case FilterPath::kError: return error.message();
    default: return "";
  }
}

std::string FilterVerdict::Reason() const {
  if (path != FilterPath::kUsageExceeds && path != FilterPath::kAggregatedUsageExceeds) {
    return KoordinatorReason();
  }
  const std::string_view unit = resource == kCpu ? "m" : "";
  return fmt::format("{} (usage {}% > threshold {}%, estimated {}{} of allocatable {}{})",
                     KoordinatorReason(), usage_percent, threshold_percent, estimated, unit,
                     allocatable, unit);
}

std::string_view FilterPathName(FilterPath path) {
  switch (path) {
    case FilterPath::kDaemonSetPod: return "daemonset-pod";
    case FilterPath::kThresholdsOff: return "thresholds-off";
    case FilterPath::kNoMetric: return "no-metric";
    case FilterPath::kMetricExpiredAllowed: return "metric-expired-allowed";
    case FilterPath::kColdStart: return "cold-start";
    case FilterPath::kWithinThresholds: return "within-thresholds";
    case FilterPath::kMetricExpired: return "metric-expired";
    case FilterPath::kUsageExceeds: return "usage-exceeds";
    case FilterPath::kAggregatedUsageExceeds: return "aggregated-usage-exceeds";
    case FilterPath::kError: return "error";
  }
  return "?";
}

std::string_view ScorePathName(ScorePath path) {
  switch (path) {
    case ScorePath::kScoringOff: return "scoring-off";
    case ScorePath::kNoMetric: return "no-metric";
    case ScorePath::kMetricExpired: return "metric-expired";
    case ScorePath::kColdStart: return "cold-start";
    case ScorePath::kScored: return "scored";
    case ScorePath::kError: return "error";
  }
  return "?";
}

}  // namespace qrm::cluster::loadaware
