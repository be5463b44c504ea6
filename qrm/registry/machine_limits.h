// MachineLimits: the CPU and NUMA node ids that exist on this machine, which plugin answers
// (cpusets, hints, topology-aware quantities) may name.
#pragma once

#include <optional>
#include <string>

#include "common/cpu_set.h"
#include "common/numa_mask.h"
#include "common/status.h"

namespace qrm::registry {

struct MachineLimits {
  // nullopt: not known (tests with a fake topology), ids are only checked for syntax.
  std::optional<CpuSet> online_cpus;
  std::optional<NumaMask> numa_nodes;
};

// The online CPUs and NUMA nodes (machine/numa_layout.h); a machine without the node
// directory (NUMA disabled) is node 0. A missing or malformed CPU list is an error naming the
// file: the host must not guess which CPUs exist.
StatusOr<MachineLimits> LoadMachineLimits(const std::string& sysfs_root);

}  // namespace qrm::registry
