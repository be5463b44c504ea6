// The planner's state between passes as qrm-drain-planner keeps it in its --state file: the
// destination hints of the last plan, the nodes an execute is draining, and the pods it
// evicted (each as a Pod object, read back with the snapshot decoder, and the time).
//
//   {"destinationHints": {"<source node>": {"<pod uid>": "<destination node>"}},
//    "deletedNodes": ["node-a"],
//    "recentEvictions": [{"evictedAt": "2026-11-27T08:00:00Z", "pod": {<Pod>}}]}
#pragma once

#include <string>
#include <string_view>

#include "cluster/drain/planner.h"
#include "common/status.h"

namespace qrm::cluster::drain {

std::string EncodePlannerState(const PlannerState& state);
// kInvalidArgument naming `name`, the field and the value for anything unreadable; unknown
// fields are refused (the file is qrm's own, a typo is a mistake).
StatusOr<PlannerState> DecodePlannerState(std::string_view text, std::string_view name);

}  // namespace qrm::cluster::drain
