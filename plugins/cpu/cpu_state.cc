#include "plugins/cpu/cpu_state.h"

#include <algorithm>

#include <fmt/format.h>

namespace qrm::cpu {

CpuState::CpuState(const Pods& pods) {
  for (const auto& [uid, containers] : pods) {
    for (const auto& [name, c] : containers) Put(uid, name, c);
  }
}

const ContainerAllocation* CpuState::Find(const std::string& pod_uid,
                                          const std::string& container) const {
  auto pod = pods_.find(pod_uid);
  if (pod == pods_.end()) return nullptr;
  auto c = pod->second.find(container);
  return c == pod->second.end() ? nullptr : &c->second;
}

void CpuState::Put(const std::string& pod_uid, const std::string& container,
                   ContainerAllocation c) {
  if (!c.dedicated()) c.cpuset = CpuSet();
  PodAllocations& pod = pods_[pod_uid];
  auto [it, inserted] = pod.try_emplace(container);
  if (!inserted) Unindex(pod_uid, container, it->second);
  it->second = std::move(c);
  Index(pod_uid, container, it->second);
}

void CpuState::Erase(const std::string& pod_uid, const std::string& container) {
  auto pod = pods_.find(pod_uid);
  if (pod == pods_.end()) return;
  auto c = pod->second.find(container);
  if (c == pod->second.end()) return;
  Unindex(pod_uid, container, c->second);
  pod->second.erase(c);
  if (pod->second.empty()) pods_.erase(pod);
}

PodAllocations CpuState::TakePod(const std::string& pod_uid) {
  auto pod = pods_.find(pod_uid);
  if (pod == pods_.end()) return {};
  PodAllocations taken = std::move(pod->second);
  pods_.erase(pod);
  for (const auto& [name, c] : taken) Unindex(pod_uid, name, c);
  return taken;
}

void CpuState::Index(const std::string& pod_uid, const std::string& container,
                     const ContainerAllocation& c) {
  ++container_count_;
  if (c.level == qos::QosLevel::kReclaimed) ++reclaimed_count_;
  if (!c.dedicated()) return;
  dedicated_cpus_ = dedicated_cpus_.Union(c.cpuset);
  if (c.numa_bound()) bound_dedicated_.emplace(pod_uid, container);
}

void CpuState::Unindex(const std::string& pod_uid, const std::string& container,
                       const ContainerAllocation& c) {
  --container_count_;
  if (c.level == qos::QosLevel::kReclaimed) --reclaimed_count_;
  if (!c.dedicated()) return;
  // Dedicated CPUs have one owner (the ledger's check refuses a file where they do not), so
  // taking this container's CPUs out of the union leaves every other owner's in it.
  dedicated_cpus_ = dedicated_cpus_.Difference(c.cpuset);
  bound_dedicated_.erase({pod_uid, container});
}

std::string PoolSettingText(const PoolSetting& setting) {
  if (setting.shared_size > 0) return fmt::format("shared {}", setting.shared_size);
  if (setting.reclaimed_size == kReclaimedAuto) return "auto";
  return fmt::format("reclaimed {}", setting.reclaimed_size);
}

int CpuState::KeepFree() const {
  if (shared_size > 0 || reclaimed_size == kReclaimedAuto) return kMinSharedCpus;
  return reclaimed_size + kMinSharedCpus;
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

CpuSet ContainerCpus(const CpuLayout& layout, const CpuPools& pools,
                     const ContainerAllocation& container) {
  if (container.dedicated()) return container.cpuset;
  if (const CpuSet* pool = WholePool(pools, container)) return *pool;
  // A NUMA-bound shared container: memory is bound to these nodes, and running on their shared
  // CPUs avoids remote access. If dedicated containers took every shared CPU there, the whole
  // pool beats no CPU at all.
  const CpuSet local = pools.shared.Intersection(layout.MaskCpus(container.numa_nodes));
  return local.Empty() ? pools.shared : local;
}

ContainerAllocation WithCpus(const CpuLayout& layout, const CpuPools& pools,
                             ContainerAllocation container) {
  container.cpuset = ContainerCpus(layout, pools, container);
  return container;
}

Status RefreshPools(const CpuLayout& layout, const CpuSet& reserved, CpuState* state) {
  const CpuSet& dedicated = state->DedicatedCpus();
  int size = state->reclaimed_size;
  if (state->shared_size > 0) {
    const int free = layout.online().Difference(reserved).Difference(dedicated).Size();
    size = std::max(0, free - state->shared_size);
  } else if (size == kReclaimedAuto) {
    size = AutoReclaimedSize(layout, reserved, dedicated, state->HasReclaimed());
  }
  StatusOr<CpuPools> pools = ComputePools(layout, reserved, dedicated, size);
  if (!pools.ok()) return pools.status();
  state->pools = std::move(*pools);
  return Status::Ok();
}

}  // namespace qrm::cpu
