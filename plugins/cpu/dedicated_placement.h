// Where one dedicated_cores container's exclusive CPUs go, given the hint Allocate received.
//
//   NUMA-bound: only CPUs of the hint's nodes, after CheckNodeSet accepts the node set; a
//     numa_exclusive container takes every allocatable CPU of those nodes. Without a hint
//     (a host that does not align topology) the first preferred hint we would offer is used.
//   Unbound: as the kubelet static policy, CPUs of the hint's nodes first, the rest from
//     anywhere; no hint means anywhere.
// The CPUs themselves are chosen by TakeExclusiveCpus.
#pragma once

#include <optional>

#include "common/cpu_set.h"
#include "common/numa_mask.h"
#include "common/status.h"
#include "plugins/cpu/hints.h"

namespace qrm::cpu {

struct DedicatedPlacement {
  CpuSet cpus;
  NumaMask numa_nodes;  // the binding (NUMA-bound only; empty otherwise)
};

// kInvalidArgument for a hint none of whose nodes has CPUs; kResourceExhausted when the
// request does not fit there (the message says why).
StatusOr<DedicatedPlacement> PlaceDedicated(const CpuAvailability& avail,
                                            const qos::RoleTable& roles,
                                            const DedicatedRequest& req, NumaMask hint);

// The CPUs a container held before the plugin lost its state, if the request can take exactly
// them again now: the same count, all still available, the reclaimed pool and shared minimum
// kept, and for a NUMA-bound request a node set CheckNodeSet accepts. nullopt otherwise (the
// caller places the request as a new one).
std::optional<DedicatedPlacement> PlacePrevious(const CpuAvailability& avail,
                                                const qos::RoleTable& roles,
                                                const DedicatedRequest& req,
                                                const CpuSet& previous);

}  // namespace qrm::cpu
