// NUMA topology hints for dedicated_cores containers, and the feasibility rules Allocate
// applies to the hint it is given (both use CheckNodeSet, so a hint we offer is always one
// Allocate accepts).
//
// Unbound containers get the kubelet static policy's hints: every set of NUMA nodes (with
// CPUs) whose free CPUs cover the request; preferred are those as narrow as the narrowest set
// whose CPUs (free or not) could cover it.
//
// NUMA-bound containers (numa_binding / numa_exclusive) get one hint per node set that can take
// them now, honouring
//   - exclusivity: a numa_exclusive container takes every non-reserved CPU of its nodes, so
//     all of them must be free, and no other NUMA-bound container may be on them (either way);
//   - anti-affinity: no node may hold a NUMA-bound container of an anti-affine role;
// preferred are the hints with the fewest nodes.
//
// Every hint also leaves the reclaimed pool and one shared CPU free (CpuAvailability::
// keep_free). An empty list means the request cannot be satisfied now.
#pragma once

#include <string>
#include <vector>

#include "common/cpu_set.h"
#include "common/log.h"
#include "common/numa_mask.h"
#include "common/status.h"
#include "plugins/cpu/cpu_layout.h"
#include "qos/qos_requirement.h"

namespace qrm::cpu {

// What one dedicated_cores container asks for.
struct DedicatedRequest {
  int cpus = 0;  // whole CPUs: the requested quantity rounded up
  bool numa_bound = false;
  bool numa_exclusive = false;
  std::string role;  // "" without a pod role
};

// A NUMA-bound dedicated container's hold on its nodes.
struct NodeClaim {
  NumaMask nodes;
  std::string role;
  bool exclusive = false;
  PodRef holder;  // views into the plugin's state, for messages; valid while it is unchanged
};

// What dedicated admission may use right now.
struct CpuAvailability {
  const CpuLayout* layout = nullptr;
  CpuSet allocatable;  // online - reserved
  CpuSet available;    // allocatable - every dedicated CPU
  std::vector<NodeClaim> claims;
  // CPUs that must stay out of dedicated hands: the reclaimed pool and the shared minimum.
  int keep_free = 0;
};

struct NumaHint {
  NumaMask nodes;
  bool preferred = false;

  friend bool operator==(const NumaHint&, const NumaHint&) = default;
};

// The CPUs `req` would take if placed on `nodes` (for numa_exclusive: every allocatable CPU
// there), or kResourceExhausted saying why it cannot be placed there. Only for NUMA-bound
// requests.
StatusOr<int> CheckNodeSet(const CpuAvailability& avail, const qos::RoleTable& roles,
                           const DedicatedRequest& req, NumaMask nodes);

// Whether taking `cpus` more dedicated CPUs still leaves keep_free; kResourceExhausted if not.
Status CheckKeepFree(const CpuAvailability& avail, int cpus);

std::vector<NumaHint> DedicatedHints(const CpuAvailability& avail, const qos::RoleTable& roles,
                                     const DedicatedRequest& req);

}  // namespace qrm::cpu
