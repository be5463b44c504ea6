// A Node object as the filter and score read it: its allocatable (EstimateNode) and its filter
// profile, each checked once when the node changes.
#pragma once

#include "cluster/loadaware/config.h"
#include "cluster/loadaware/inputs.h"
#include "cluster/loadaware/node_load.h"

namespace qrm::cluster::loadaware {

// allocatable_error (qrm): cpu or memory missing or 0 (Koordinator skips such a resource in
// the filter and scores it 0), a vectorized value negative or above kMaxQuantity.
// profile_error: see NodeFilterProfile.
NodeSpecState BuildNodeSpec(const Config& config, const NodeInput& node);

}  // namespace qrm::cluster::loadaware
