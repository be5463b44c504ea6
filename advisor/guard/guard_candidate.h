// A pod the guard may throttle or evict, with what the sorters and the precise walks read: its
// class and priority, how long it has run, its latest usage and its CPU request, limit and the
// quota the guard holds it at.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace qrm::advisor::guard {

// The candidates' classes, in the order they give way (docs/guard.md): reclaimed_cores pods
// first, shared_cores ones only when the policy says so; dedicated_cores pods never.
enum class CandidateClass { kReclaimed = 0, kShared = 1 };

struct GuardCandidate {
  std::string pod_uid, pod_namespace, pod_name;
  CandidateClass cls = CandidateClass::kReclaimed;
  int32_t priority = 0;             // the pod's priority value: a lower one gives way first
  int64_t start_time_s = 0;         // Unix seconds: the one that has run for less gives way first
  std::optional<double> cpu_usage;  // cores, latest sample (none: not sampled lately)
  std::optional<double> memory_usage;   // bytes, working set
  std::optional<double> ext_cpu_usage;  // cores of extended (batch) CPU used, when it has some
  std::optional<double> ext_cpu_limit;  // its extended CPU limit
  double cpu_request = 0;               // cores
  std::optional<double> cpu_limit;      // cores (none: no limit)
  std::optional<double> cpu_quota;      // cores the guard holds it at (none: not throttled)

  std::string Key() const { return pod_namespace + "/" + pod_name; }
};

}  // namespace qrm::advisor::guard
