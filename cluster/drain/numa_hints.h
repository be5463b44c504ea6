// The topology hints one of qrm's plugins would give for one resource of a container, computed
// from a NumaNodeState's zones (see numa_admission.h for which rule applies to which resource).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cluster/drain/numa_state.h"
#include "qrm/topology/merge.h"

namespace qrm::cluster::drain {

enum class PreferRule {
  // Preferred are the fitting sets with the fewest zones (qrm's NUMA-bound CPUs and memory,
  // plugin resources).
  kNarrowestFree,
  // Preferred are the fitting sets as narrow as the narrowest set whose capacity could hold
  // the request (the kubelet static CPU policy, qrm's unbound dedicated CPUs).
  kNarrowestCapacity,
};

// What a zone can give of `resource`: its free amount, for whole CPUs rounded down to 1000m.
int64_t UsableFree(const NumaZone& zone, const std::string& resource, bool whole_cpus);

// One hint per set of the zones in `allowed` that have `resource` (capacity above 0) whose
// usable free amount covers `amount`, narrowest first (NumaMask order). Empty when nothing
// fits.
std::vector<topology::TopologyHint> ResourceHints(const NumaNodeState& state,
                                                  const std::string& resource, int64_t amount,
                                                  PreferRule rule, bool whole_cpus,
                                                  NumaMask allowed);

}  // namespace qrm::cluster::drain
