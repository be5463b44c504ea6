// Koordinator's JSON annotations (apis/extension), read with Go's encoding/json rules as
// Koordinator's json.Unmarshal reads them: keys of structs in any case, unknown keys skipped,
// a wrong JSON type an error. Each parser returns kInvalidArgument naming the annotation, the
// path inside its JSON and the value.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "cluster/loadaware/inputs.h"
#include "common/status.h"

namespace qrm::cluster::scheduler {

// scheduling.koordinator.sh/load-estimated-scaling-factors: {"cpu": 100}. nullopt for "null".
StatusOr<std::optional<std::map<std::string, int64_t>>> ParseScalingFactors(std::string_view text);

// node.koordinator.sh/raw-allocatable: a ResourceList, {"cpu": "32", "memory": "64Gi"}.
// nullopt for "null".
StatusOr<std::optional<loadaware::ResourceList>> ParseRawAllocatable(std::string_view text);

// scheduling.koordinator.sh/usage-thresholds: extension.CustomUsageThresholds.
// nullopt for "null".
StatusOr<std::optional<loadaware::CustomUsageThresholds>> ParseUsageThresholds(
    std::string_view text);

}  // namespace qrm::cluster::scheduler
