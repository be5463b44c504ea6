// QoS levels and what admission does when a plugin fails for them.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace qrm::host {

inline constexpr std::string_view kQosLevelAnnotation = "katalyst.kubewharf.io/qos_level";
inline constexpr std::string_view kSharedCores = "shared_cores";

// The pod's QoS level from its annotations; shared_cores when none is given.
std::string QosLevelOf(const std::map<std::string, std::string>& annotations);

enum class FailurePolicy {
  kFail,    // a failing plugin fails the admission
  kIgnore,  // the container is admitted without that plugin's resource
};

// Per-QoS-level failure policy. By default only shared_cores tolerates a
// failing plugin: shared containers run in the shared pool anyway, while
// dedicated, reclaimed and system containers would silently lose isolation.
struct FailurePolicies {
  std::map<std::string, FailurePolicy> by_level = {
      {std::string(kSharedCores), FailurePolicy::kIgnore}};
  FailurePolicy fallback = FailurePolicy::kFail;

  FailurePolicy For(const std::string& qos_level) const {
    auto it = by_level.find(qos_level);
    return it == by_level.end() ? fallback : it->second;
  }
};

StatusOr<FailurePolicy> ParseFailurePolicy(std::string_view name);  // "fail" | "ignore"

// Whether a plugin's error means the plugin could not answer (down, hung, crashed, or it
// does not implement the call) rather than that it refused the request. The "ignore" policy
// covers only outages: a request a plugin rejects as invalid (kInvalidArgument) or that does
// not fit (kResourceExhausted, kFailedPrecondition) fails whatever the QoS level, so bad
// input never slips through as an admission without that resource.
inline bool IsPluginOutage(const Status& s) {
  switch (s.code()) {
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
    case StatusCode::kInternal:
    case StatusCode::kUnknown:
    case StatusCode::kCancelled:
    case StatusCode::kAborted:
    case StatusCode::kUnimplemented:
    case StatusCode::kDataLoss: return true;
    default: return false;
  }
}

}  // namespace qrm::host
