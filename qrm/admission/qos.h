// What admission does when a plugin fails, by the pod's QoS as the one resolver (qos/) sees it:
// the same labels, annotations and role table the plugins use.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/status.h"
#include "qos/qos_requirement.h"

namespace qrm::admission {

inline constexpr std::string_view kSharedCores = "shared_cores";
// The failure-policy key of pods with neither a qos_level annotation nor a role.
inline constexpr std::string_view kUnannotated = "unannotated";

// The level admin and metrics show: the resolved level's name, or "invalid" when the pod's QoS
// does not resolve (unknown level or role; the plugins refuse such a pod).
std::string QosLevelName(const StatusOr<qos::QosRequirement>& resolved);

enum class FailurePolicy {
  kFail,    // a failing plugin fails the admission
  kIgnore,  // the container is admitted without that plugin's resource
};

// Per-QoS-level failure policy, as the kubewharf kubelet's canSkipEndpointError: only
// shared_cores tolerates a failing plugin (shared containers run in the shared pool anyway,
// while dedicated, reclaimed and system containers would silently lose isolation). A pod is
// shared_cores when its qos_level annotation says so or its role resolves to it; a pod with
// neither is "unannotated" (upstream counts it as shared_cores: ignore by default). A pod whose
// QoS does not resolve gets `fallback`.
struct FailurePolicies {
  std::map<std::string, FailurePolicy> by_level = {
      {std::string(kSharedCores), FailurePolicy::kIgnore}};
  FailurePolicy unannotated = FailurePolicy::kIgnore;
  FailurePolicy fallback = FailurePolicy::kFail;

  FailurePolicy For(const StatusOr<qos::QosRequirement>& resolved) const {
    if (!resolved.ok()) return fallback;
    if (!resolved->annotated) return unannotated;
    auto it = by_level.find(std::string(qos::QosLevelName(resolved->level)));
    return it == by_level.end() ? fallback : it->second;
  }
  // Sets the policy of a level name or of "unannotated"; other keys are errors naming them.
  Status Set(const std::string& key, FailurePolicy policy);
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

}  // namespace qrm::admission
