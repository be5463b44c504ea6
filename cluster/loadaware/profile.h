// The usage thresholds the filter applies on a node (usageThresholdsFilterProfile, helper.go):
// the arguments', or the node's own from its scheduling.koordinator.sh/usage-thresholds
// annotation. Each part of the annotation that is set replaces the same part of the arguments
// whole (an annotation naming only memory leaves cpu unfiltered on that node); an aggregated
// part counts only with both thresholds and a type, and its duration does not inherit.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "cluster/loadaware/args.h"
#include "cluster/loadaware/inputs.h"
#include "cluster/loadaware/resource_vector.h"
#include "common/status.h"

namespace qrm::cluster::loadaware {

struct AggregatedFilterProfile {
  ResourceVector thresholds{};
  std::string type;
  std::chrono::seconds duration{0};  // 0: the longest duration the NodeMetric reports
};

struct FilterProfile {
  ResourceVector usage{};  // all zero: off
  ResourceVector prod{};   // all zero: off
  std::optional<AggregatedFilterProfile> aggregated;
};

FilterProfile ArgsFilterProfile(const LoadAwareArgs& args, const Vectorizer& vectorizer);

// The node's profile, or nullopt when its annotation changes nothing (absent, or no part set).
// Errors (qrm; Koordinator skips them silently): a threshold naming a resource the vectorizer
// does not know (add it to supportedResources), or a negative threshold.
StatusOr<std::optional<FilterProfile>> NodeFilterProfile(
    const FilterProfile& args_profile, const std::optional<CustomUsageThresholds>& custom,
    const Vectorizer& vectorizer);

}  // namespace qrm::cluster::loadaware
