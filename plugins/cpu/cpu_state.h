// CpuState: everything the CPU plugin knows about its containers, and the pools derived
// from it. A plain value: the plugin changes a copy and swaps it in only once the copy is
// durably checkpointed, so a failed write leaves the old state untouched.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "common/cpu_set.h"
#include "common/numa_mask.h"
#include "common/status.h"
#include "plugins/cpu/cpu_layout.h"
#include "plugins/cpu/pools.h"
#include "qos/qos_requirement.h"

namespace qrm::cpu {

// One container's CPUs.
struct ContainerAllocation {
  std::string pod_namespace;
  std::string pod_name;
  qos::QosLevel level = qos::QosLevel::kShared;
  std::string role;  // "" without a pod role
  bool numa_binding = false;
  bool numa_exclusive = false;
  int64_t request_milli = 0;  // the requested quantity in milli-CPUs
  // NUMA-bound containers: the nodes they are bound to. Empty for the others.
  NumaMask numa_nodes;
  // dedicated_cores: its exclusive CPUs (the source of truth). Everyone else: the pool it
  // runs on, refreshed by RefreshPools.
  CpuSet cpuset;

  bool dedicated() const { return level == qos::QosLevel::kDedicated; }
  bool numa_bound() const { return numa_binding || numa_exclusive; }

  friend bool operator==(const ContainerAllocation&, const ContainerAllocation&) = default;
};

using PodAllocations = std::map<std::string, ContainerAllocation>;  // by container name

struct CpuState {
  std::map<std::string, PodAllocations> pods;  // by pod uid
  // The reclaimed pool size setting: a number of CPUs, or kReclaimedAuto (pools.h).
  int reclaimed_size = kReclaimedAuto;
  CpuPools pools;

  const ContainerAllocation* Find(const std::string& pod_uid, const std::string& container) const;
  // Union of every dedicated container's CPUs.
  CpuSet DedicatedCpus() const;
  int ContainerCount() const;
  // Whether some container is reclaimed_cores (the auto reclaimed size depends on it).
  bool HasReclaimed() const;
  // CPUs dedicated admission must leave free: an explicit reclaimed pool and the shared
  // minimum (the auto pool yields).
  int KeepFree() const;

  friend bool operator==(const CpuState&, const CpuState&) = default;
};

// The pool CPUs a non-dedicated container runs on: system_cores the reserved pool (the shared
// pool when nothing is reserved), reclaimed_cores the reclaimed pool, shared_cores the shared
// pool, restricted to its NUMA nodes when it is NUMA-bound (unless that leaves nothing).
CpuSet PoolCpusFor(const CpuLayout& layout, const CpuPools& pools,
                   const ContainerAllocation& container);

// Recomputes state->pools from the dedicated CPUs and reclaimed_size (the auto setting
// resolved against the containers held), then every
// non-dedicated container's cpuset. Errors (and leaves *state alone) as ComputePools does.
Status RefreshPools(const CpuLayout& layout, const CpuSet& reserved, CpuState* state);

}  // namespace qrm::cpu
