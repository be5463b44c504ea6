// Enumerating sets of NUMA nodes, for hints (every set that can take a container) and for
// exclusive CPUs (the narrowest set that can hold a request).
#pragma once

#include <functional>
#include <vector>

#include "common/numa_mask.h"

namespace qrm::cpu {

// Node sets are enumerated narrowest first; past this many candidate sets (machines with many
// nodes) wider sets are no longer tried.
inline constexpr int kMaxCandidateNodeSets = 1 << 16;

// Calls `visit` for every combination of `width` of `nodes` (ids ascending), in lexicographic
// order, until it returns false or `budget` runs out (each set visited costs 1). Returns false
// when stopped.
bool ForEachNodeSet(const std::vector<int>& nodes, int width, int* budget,
                    const std::function<bool(NumaMask)>& visit);

}  // namespace qrm::cpu
