// Choosing the exclusive CPUs of one dedicated_cores container.
//
// The order follows the kubelet static policy's takeByTopology: whole sockets and NUMA nodes
// when the request covers one (larger unit first), then whole physical cores, then single
// hardware threads, so that a container never shares a core with a neighbour unless its size
// forces it to. Among places that can hold what is still needed, the one with the fewest free
// CPUs wins (pack before spread, keeping large free areas for large requests); when no single
// NUMA node can hold the rest, the node with the most free whole cores goes first, so the
// container spans as few nodes as possible. Ties go to the socket already used, then to the
// lowest ids.
#pragma once

#include "common/cpu_set.h"
#include "common/status.h"
#include "plugins/cpu/cpu_layout.h"

namespace qrm::cpu {

// Takes `count` CPUs out of `available` (CPUs outside the layout are ignored).
// kResourceExhausted naming both figures when fewer than `count` are available.
StatusOr<CpuSet> TakeExclusiveCpus(const CpuLayout& layout, const CpuSet& available, int count);

}  // namespace qrm::cpu
