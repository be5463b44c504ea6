#include "plugins/cpu/cpu_state.h"

namespace qrm::cpu {

const ContainerAllocation* CpuState::Find(const std::string& pod_uid,
                                          const std::string& container) const {
  auto pod = pods.find(pod_uid);
  if (pod == pods.end()) return nullptr;
  auto c = pod->second.find(container);
  return c == pod->second.end() ? nullptr : &c->second;
}

CpuSet CpuState::DedicatedCpus() const {
  CpuSet cpus;
  for (const auto& [uid, containers] : pods) {
    for (const auto& [name, c] : containers) {
      if (c.dedicated()) cpus = cpus.Union(c.cpuset);
    }
  }
  return cpus;
}

int CpuState::ContainerCount() const {
  int n = 0;
  for (const auto& [uid, containers] : pods) n += static_cast<int>(containers.size());
  return n;
}

bool CpuState::HasReclaimed() const {
  for (const auto& [uid, containers] : pods) {
    for (const auto& [name, c] : containers) {
      if (c.level == qos::QosLevel::kReclaimed) return true;
    }
  }
  return false;
}

int CpuState::KeepFree() const {
  return (reclaimed_size == kReclaimedAuto ? 0 : reclaimed_size) + kMinSharedCpus;
}

namespace {

// The pool a non-dedicated container runs on when that is a whole pool; nullptr for dedicated
// and NUMA-bound shared containers.
const CpuSet* WholePool(const CpuPools& pools, const ContainerAllocation& c) {
  switch (c.level) {
    case qos::QosLevel::kDedicated: return nullptr;
    case qos::QosLevel::kSystem: return pools.reserved.Empty() ? &pools.shared : &pools.reserved;
    case qos::QosLevel::kReclaimed:
      // Without a reclaimed pool of its own, offline work shares the shared pool.
      return pools.reclaimed.Empty() ? &pools.shared : &pools.reclaimed;
    case qos::QosLevel::kShared: return c.numa_bound() ? nullptr : &pools.shared;
  }
  return nullptr;
}

}  // namespace

CpuSet PoolCpusFor(const CpuLayout& layout, const CpuPools& pools,
                   const ContainerAllocation& container) {
  if (container.dedicated()) return container.cpuset;
  if (const CpuSet* pool = WholePool(pools, container)) return *pool;
  // A NUMA-bound shared container: memory is bound to these nodes, and running on their shared
  // CPUs avoids remote access. If dedicated containers took every shared CPU there, the whole
  // pool beats no CPU at all.
  const CpuSet local = pools.shared.Intersection(layout.MaskCpus(container.numa_nodes));
  return local.Empty() ? pools.shared : local;
}

Status RefreshPools(const CpuLayout& layout, const CpuSet& reserved, CpuState* state) {
  const CpuSet dedicated = state->DedicatedCpus();
  const int size = state->reclaimed_size == kReclaimedAuto
                       ? AutoReclaimedSize(layout, reserved, dedicated, state->HasReclaimed())
                       : state->reclaimed_size;
  StatusOr<CpuPools> pools = ComputePools(layout, reserved, dedicated, size);
  if (!pools.ok()) return pools.status();
  state->pools = std::move(*pools);
  for (auto& [uid, containers] : state->pods) {
    for (auto& [name, c] : containers) {
      if (c.dedicated()) continue;
      // Most containers keep their pool: comparing is cheaper than copying.
      if (const CpuSet* pool = WholePool(state->pools, c)) {
        if (*pool != c.cpuset) c.cpuset = *pool;
      } else {
        c.cpuset = PoolCpusFor(layout, state->pools, c);
      }
    }
  }
  return Status::Ok();
}

}  // namespace qrm::cpu
