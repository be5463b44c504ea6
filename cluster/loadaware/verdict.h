// What the filter and the score decide for one node, with the path that led there, so the
// extender can explain a decision and tests can check the path, not only the outcome.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace qrm::cluster::loadaware {

enum class FilterPath {
  // Schedulable.
  kDaemonSetPod,          // DaemonSet pods are never filtered
  kThresholdsOff,         // the thresholds that apply are all 0
  kNoMetric,              // no NodeMetric: load-aware scheduling does not apply
  kMetricExpiredAllowed,  // expired, and expiry is not filtered or scheduling is allowed
  kColdStart,             // the NodeMetric has no status.nodeMetric yet
  kWithinThresholds,
  // Unschedulable.
  kMetricExpired,           // "node(s) nodeMetric expired"
  kUsageExceeds,            // "node(s) <resource> usage exceed threshold"
  kAggregatedUsageExceeds,  // "node(s) <resource> aggregated usage exceed threshold"
  // Bad input for this node (qrm): neither placed nor silently passed.
  kError,
};

struct FilterVerdict {
  FilterPath path = FilterPath::kNoMetric;
  // Over its threshold (kUsageExceeds, kAggregatedUsageExceeds).
  std::string resource;
  int64_t usage_percent = 0;
  int64_t threshold_percent = 0;
  int64_t estimated = 0;  // cpu in milli-cores, others in their units
  int64_t allocatable = 0;
  Status error;  // kError

  bool schedulable() const { return path < FilterPath::kMetricExpired; }
  bool is_error() const { return path == FilterPath::kError; }
  // The unschedulable reason worded exactly as Koordinator does; "" when schedulable, the
  // error's message on an error.
  std::string KoordinatorReason() const;
  // KoordinatorReason with the numbers: "node(s) cpu usage exceed threshold (usage 73% >
  // threshold 65%, estimated 70250m of allocatable 96000m)".
  std::string Reason() const;
};

enum class ScorePath {
  kScoringOff,     // no resource weighted and no dominant weight: 0
  kNoMetric,       // 0
  kMetricExpired,  // 0
  kColdStart,      // no status.nodeMetric yet: 0
  kScored,
  kError,  // bad input for this node (qrm)
};

struct NodeScore {
  int64_t score = 0;  // 0..100
  ScorePath path = ScorePath::kNoMetric;
  Status error;  // kError
};

std::string_view FilterPathName(FilterPath path);
std::string_view ScorePathName(ScorePath path);

}  // namespace qrm::cluster::loadaware
