#include "cluster/loadaware/node_spec.h"

#include <fmt/format.h>

namespace qrm::cluster::loadaware {
namespace {

Status CheckAllocatable(const Vectorizer& v, const ResourceVector& allocatable) {
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t value = allocatable[i];
    if (value < 0) {
      return InvalidArgumentError(fmt::format("allocatable {} is negative ({})", v.name(i), value));
    }
    if (value > kMaxQuantity) {
      return InvalidArgumentError(
          fmt::format("allocatable {} = {} is absurd (above {})", v.name(i), value, kMaxQuantity));
    }
    if (value == 0 && (v.name(i) == kCpu || v.name(i) == kMemory)) {
      return InvalidArgumentError(fmt::format(
          "allocatable {} is missing or 0 (no usage percent can be computed)", v.name(i)));
    }
  }
  return Status::Ok();
}

}  // namespace

NodeSpecState BuildNodeSpec(const Config& config, const NodeInput& node) {
  NodeSpecState spec;
  spec.allocatable = config.estimator().NodeAllocatable(node);
  spec.allocatable_error = CheckAllocatable(config.vectorizer(), spec.allocatable);
  StatusOr<std::optional<FilterProfile>> profile =
      NodeFilterProfile(config.profile(), node.custom_usage_thresholds, config.vectorizer());
  if (profile.ok()) {
    spec.own_profile = std::move(profile).value();
  } else {
    spec.profile_error = profile.status();
  }
  return spec;
}

}  // namespace qrm::cluster::loadaware
