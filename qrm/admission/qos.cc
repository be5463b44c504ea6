#include "qrm/admission/qos.h"

#include <fmt/format.h>

namespace qrm::host {

std::string QosLevelOf(const std::map<std::string, std::string>& annotations) {
  auto it = annotations.find(std::string(kQosLevelAnnotation));
  return it == annotations.end() || it->second.empty() ? std::string(kSharedCores) : it->second;
}

StatusOr<FailurePolicy> ParseFailurePolicy(std::string_view name) {
  if (name == "fail") return FailurePolicy::kFail;
  if (name == "ignore") return FailurePolicy::kIgnore;
  return InvalidArgumentError(
      fmt::format("failure policy \"{}\" is not one of \"fail\", \"ignore\"", name));
}

}  // namespace qrm::host
