// CpuState: everything the CPU plugin knows about its containers, and the pools derived
// from it. A value: the plugin changes it in place and undoes the change when the ledger
// could not record it (CpuPlugin::CommitOrUndo), so a failed write leaves the state as it was.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

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
  // dedicated_cores: its exclusive CPUs (the source of truth). Empty in a CpuState for every
  // other container: those run on a pool, which moves with every dedicated admission, so their
  // CPUs are derived when asked (ContainerCpus) instead of rewritten in each container.
  CpuSet cpuset;

  bool dedicated() const { return level == qos::QosLevel::kDedicated; }
  bool numa_bound() const { return numa_binding || numa_exclusive; }

  friend bool operator==(const ContainerAllocation&, const ContainerAllocation&) = default;
};

using PodAllocations = std::map<std::string, ContainerAllocation>;  // by container name

// CpuState's size setting as one value, for changing it.
struct PoolSetting {
  int reclaimed_size = kReclaimedAuto;
  int shared_size = 0;

  friend bool operator==(const PoolSetting&, const PoolSetting&) = default;
};

// The setting for messages: "auto", "reclaimed 4" or "shared 28".
std::string PoolSettingText(const PoolSetting& setting);

// The containers held, and what admission needs to know about all of them kept up to date as
// they change (the dedicated CPUs, whether any is reclaimed_cores, the NUMA claims), so that an
// admission costs the same with 5,000 containers placed as with none.
class CpuState {
 public:
  using Pods = std::map<std::string, PodAllocations>;  // by pod uid
  // A container by (pod uid, container name).
  using ContainerKey = std::pair<std::string, std::string>;

  CpuState() = default;
  explicit CpuState(const Pods& pods);

  // The pool size setting. Either reclaimed_size, a number of CPUs or kReclaimedAuto
  // (pools.h), or, when shared_size > 0 (the pool control file's "shared" alone: what
  // qrm-advisor writes), a shared pool of that size with the reclaimed pool taking the rest.
  // The latter yields to dedicated admissions: they shrink the reclaimed pool first (to 0),
  // then the shared one (to kMinSharedCpus); reclaimed_size is then not used.
  int reclaimed_size = kReclaimedAuto;
  int shared_size = 0;
  CpuPools pools;

  const Pods& pods() const { return pods_; }
  const ContainerAllocation* Find(const std::string& pod_uid, const std::string& container) const;
  // Adds (or replaces) a container. A pool container's cpuset is dropped (see
  // ContainerAllocation::cpuset).
  void Put(const std::string& pod_uid, const std::string& container, ContainerAllocation c);
  // Removes one container, and its pod when it was the pod's last.
  void Erase(const std::string& pod_uid, const std::string& container);
  // Removes a pod and returns its containers (none for an unknown pod).
  PodAllocations TakePod(const std::string& pod_uid);

  // Union of every dedicated container's CPUs.
  const CpuSet& DedicatedCpus() const { return dedicated_cpus_; }
  int ContainerCount() const { return container_count_; }
  // Whether some container is reclaimed_cores (the auto reclaimed size depends on it).
  bool HasReclaimed() const { return reclaimed_count_ > 0; }
  // The NUMA-bound dedicated containers: they claim their nodes (hints.h, NodeClaim).
  const std::set<ContainerKey>& BoundDedicated() const { return bound_dedicated_; }
  // CPUs dedicated admission must leave free: an explicit reclaimed pool and the shared
  // minimum (the auto pool and a reclaimed pool sized by its shared pool yield).
  int KeepFree() const;
  PoolSetting setting() const { return {reclaimed_size, shared_size}; }
  void set_setting(const PoolSetting& s) {
    reclaimed_size = s.reclaimed_size;
    shared_size = s.shared_size;
  }

  friend bool operator==(const CpuState&, const CpuState&) = default;

 private:
  void Index(const std::string& pod_uid, const std::string& container,
             const ContainerAllocation& c);
  void Unindex(const std::string& pod_uid, const std::string& container,
               const ContainerAllocation& c);

  Pods pods_;
  // Derived from pods_, kept in step by Put, Erase and TakePod.
  CpuSet dedicated_cpus_;
  int container_count_ = 0;
  int reclaimed_count_ = 0;
  std::set<ContainerKey> bound_dedicated_;
};

// The CPUs a container runs on: a dedicated container its own; system_cores the reserved pool
// (the shared pool when nothing is reserved), reclaimed_cores the reclaimed pool, shared_cores
// the shared pool, restricted to its NUMA nodes when it is NUMA-bound (unless that leaves
// nothing).
CpuSet ContainerCpus(const CpuLayout& layout, const CpuPools& pools,
                     const ContainerAllocation& container);

// `container` as reported and recorded: its cpuset is the CPUs it runs on now.
ContainerAllocation WithCpus(const CpuLayout& layout, const CpuPools& pools,
                             ContainerAllocation container);

// Recomputes state->pools from the dedicated CPUs and the size setting (auto resolved against
// the containers held, a shared size against the CPUs dedicated containers leave). Errors (and
// leaves *state alone) as ComputePools does. Costs the same whatever the number of containers:
// their CPUs are derived.
Status RefreshPools(const CpuLayout& layout, const CpuSet& reserved, CpuState* state);

}  // namespace qrm::cpu
