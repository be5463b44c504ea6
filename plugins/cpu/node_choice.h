// The NUMA nodes one exclusive-CPU request is taken from.
//
// Spanning fewer NUMA nodes matters more to a container than which cores it gets inside them,
// so TakeExclusiveCpus first decides where, then what: the narrowest set of nodes whose free
// CPUs hold the whole request (its odd last thread included). Among the narrowest: the fewest
// sockets, then as many free whole cores as the request can use (so that it shares no core it
// need not), then the fewest free CPUs (pack, keeping large free areas for large requests),
// then the lowest node ids.
#pragma once

#include "common/cpu_set.h"
#include "common/numa_mask.h"
#include "plugins/cpu/cpu_layout.h"

namespace qrm::cpu {

// The nodes to take `count` of `available` (online CPUs) from. `available` holds at least
// `count` CPUs. On machines with so many nodes that kMaxCandidateNodeSets sets are examined
// without an answer, every node with free CPUs (the caller then packs without this bound).
NumaMask ChooseNodes(const CpuLayout& layout, const CpuSet& available, int count);

}  // namespace qrm::cpu
