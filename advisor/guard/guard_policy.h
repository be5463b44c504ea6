// The watermark guard's policy (docs/guard.md): when the node's real usage crosses a watermark,
// low-priority work gives way, first by throttling, then by eviction, and only as much as the
// gap requires. In the spirit of Crane's NodeQOSEnsurancePolicy and AvoidanceAction, in one
// JSON file:
//
//   {"objectiveEnsurances": [
//      {"name": "cpu-usage",
//       "metricRule": {"name": "cpu_total_usage", "value": "80%"},   // or 6.5 (cores)
//       "actionName": "throttle",          // "throttle", "evict" or "throttle-evict"
//       "strategy": "None",                // "None" (act) or "Preview" (log only)
//       "avoidanceThreshold": 2,           // consecutive breaching samples before acting
//       "restoreThreshold": 3,             // consecutive samples below watermark - margin
//       "restoreMargin": "5%"}],           // or a value in the metric's unit
//    "throttle": {"stepCPURatio": 10, "minCPURatio": 10, "belowRequest": false},
//    "eviction": {"mode": "dry-run", "coolDownSeconds": 60, "maxPodsPerRound": 5,
//                 "terminationGracePeriodSeconds": 30},
//    "candidates": {"sharedCores": false, "skip": ["kube-system/*", "default/db"]}}
//
// Units: cpu_total_usage in cores, memory_total_usage in bytes; a string "N%" is a percent of
// the node's capacity of that resource. Every key but objectiveEnsurances is optional.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace qrm::advisor::guard {

// A threshold in the metric's unit, or a percent of the node's capacity.
struct Level {
  double value = 0;
  bool percent = false;

  double Resolve(double capacity) const { return percent ? capacity * value / 100 : value; }
  friend bool operator==(const Level&, const Level&) = default;
};

enum class GuardAction { kThrottle, kEvict, kThrottleThenEvict };
enum class Strategy { kApply, kPreview };  // Crane's "None" and "Preview"

struct ObjectiveEnsurance {
  std::string name;    // unique within the policy
  std::string metric;  // a metric of the registry (guard_metrics.h)
  Level watermark;
  GuardAction action = GuardAction::kThrottle;
  Strategy strategy = Strategy::kApply;
  int avoidance_threshold = 1;  // >= 1
  int restore_threshold = 1;    // >= 1
  Level restore_margin;         // >= 0, below the watermark

  friend bool operator==(const ObjectiveEnsurance&, const ObjectiveEnsurance&) = default;
};

struct ThrottleOptions {
  double step_ratio = 0.10;     // a round lowers (raises) a quota by this share; (0, 1]
  double min_cpu_ratio = 0.10;  // never below this share of the pod's CPU limit; [0, 1]
  bool below_request = false;   // may a quota go below the pod's CPU request

  friend bool operator==(const ThrottleOptions&, const ThrottleOptions&) = default;
};

enum class EvictMode { kDryRun, kApi, kCri };

struct EvictionOptions {
  EvictMode mode = EvictMode::kDryRun;
  int64_t cool_down_s = 60;     // between eviction rounds; >= 0
  int max_pods_per_round = 5;   // >= 1: the bound when a metric cannot be quantified
  int64_t grace_period_s = 30;  // >= 0

  friend bool operator==(const EvictionOptions&, const EvictionOptions&) = default;
};

struct CandidateOptions {
  bool shared_cores = false;      // shared_cores pods are candidates after reclaimed_cores ones
  std::vector<std::string> skip;  // "namespace/name" or "namespace/*": never touched

  // Whether the pod is on the skip list.
  bool Skipped(std::string_view pod_namespace, std::string_view pod_name) const;
  friend bool operator==(const CandidateOptions&, const CandidateOptions&) = default;
};

struct GuardPolicy {
  std::vector<ObjectiveEnsurance> ensurances;
  ThrottleOptions throttle;
  EvictionOptions eviction;
  CandidateOptions candidates;

  friend bool operator==(const GuardPolicy&, const GuardPolicy&) = default;
};

// Parses and validates the policy file's JSON. kInvalidArgument naming the key (as a path,
// e.g. "objectiveEnsurances[1].metricRule.value") and the value for: not JSON, unknown keys,
// wrong types, values out of range, an unknown metric or action, a duplicate name, a percent
// that is not a number followed by "%".
StatusOr<GuardPolicy> ParseGuardPolicy(std::string_view json);

}  // namespace qrm::advisor::guard
