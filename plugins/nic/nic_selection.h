// Which NICs can serve a container, the NUMA hints that follow, and the pick for a hint.
// Pure functions over NicState.
//
// A NIC is a candidate when it is up and has `mbps` free (any up NIC when no bandwidth is
// asked for). Hints: one preferred single-node hint per NUMA node with a candidate;
// no preference (nullopt) when candidates exist but none has a known node, since then the
// container's node does not matter to us; an empty list when there is no candidate at all.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/numa_mask.h"
#include "plugins/nic/nic_state.h"

namespace qrm::nic {

std::vector<const Nic*> Candidates(const NicState& state, int64_t mbps);

std::optional<std::vector<NumaMask>> NicHints(const NicState& state, int64_t mbps);

// The NIC for a container whose merged affinity is `hint` (empty: anywhere): the candidates
// on the hint's lowest node that has one (ties by name), else a candidate on no known node
// (ties by name). Without a hint, nodes are tried in ascending order. nullptr when none.
const Nic* PickNic(const NicState& state, NumaMask hint, int64_t mbps);

}  // namespace qrm::nic
