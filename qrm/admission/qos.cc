#include "qrm/admission/qos.h"

#include <fmt/format.h>

#include "common/quote.h"

namespace qrm::admission {

std::string QosLevelName(const StatusOr<qos::QosRequirement>& resolved) {
  return resolved.ok() ? std::string(qos::QosLevelName(resolved->level)) : "invalid";
}

Status FailurePolicies::Set(const std::string& key, FailurePolicy policy) {
  if (key == kUnannotated) {
    unannotated = policy;
    return Status::Ok();
  }
  if (!qos::ParseQosLevel(key).ok()) {
    return InvalidArgumentError(
        fmt::format("failure_policy: unknown level {} (expected dedicated_cores, shared_cores, "
                    "reclaimed_cores, system_cores or unannotated)",
                    Quote(key)));
  }
  by_level[key] = policy;
  return Status::Ok();
}

StatusOr<FailurePolicy> ParseFailurePolicy(std::string_view name) {
  if (name == "fail") return FailurePolicy::kFail;
  if (name == "ignore") return FailurePolicy::kIgnore;
  return InvalidArgumentError(
      fmt::format("failure policy \"{}\" is not one of \"fail\", \"ignore\"", name));
}

}  // namespace qrm::admission
