#include "plugins/cpu/cpu_layout.h"

#include <algorithm>
#include <cassert>

namespace qrm::cpu {

CpuLayout::CpuLayout(const machine::MachineTopology& topology) : online_(topology.OnlineCpus()) {
  for (const machine::Core& core : topology.Cores()) {
    CoreInfo info;
    info.threads = core.threads;
    info.node = core.node;
    info.socket = core.key.package_id;
    info.first_cpu = core.threads.First().value_or(0);
    const std::vector<int> ids = core.threads.Ids();
    info.last_cpu = ids.empty() ? 0 : ids.back();
    threads_per_core_ = std::max(threads_per_core_, core.threads.Size());
    cores_.push_back(std::move(info));
  }
  std::sort(cores_.begin(), cores_.end(),
            [](const CoreInfo& a, const CoreInfo& b) { return a.first_cpu < b.first_cpu; });

  const std::vector<int> ids = online_.Ids();
  core_of_cpu_.assign(ids.empty() ? 0 : ids.back() + 1, -1);
  for (size_t i = 0; i < cores_.size(); ++i) {
    for (int cpu : cores_[i].threads) core_of_cpu_[cpu] = static_cast<int>(i);
  }
  for (const machine::CpuInfo& cpu : topology.cpus) {
    socket_cpus_[cpu.package_id].Add(cpu.id);
    socket_of_node_.try_emplace(cpu.node, cpu.package_id);
  }
  for (const machine::NumaNodeInfo& node : topology.nodes) {
    nodes_.push_back(node.id);
    node_cpus_[node.id] = node.cpus;
    if (!node.cpus.Empty()) {
      cpu_nodes_.push_back(node.id);
      cpu_node_mask_ = cpu_node_mask_.With(node.id);
    }
  }
}

int CpuLayout::CoreOf(int cpu) const {
  assert(cpu >= 0 && cpu < static_cast<int>(core_of_cpu_.size()) && core_of_cpu_[cpu] >= 0);
  return core_of_cpu_[cpu];
}

CpuSet CpuLayout::NodeCpus(int node) const {
  auto it = node_cpus_.find(node);
  return it == node_cpus_.end() ? CpuSet() : it->second;
}

CpuSet CpuLayout::MaskCpus(NumaMask mask) const {
  CpuSet cpus;
  for (int node : mask.Nodes()) cpus = cpus.Union(NodeCpus(node));
  return cpus;
}

NumaMask CpuLayout::NodesOf(const CpuSet& cpus) const {
  NumaMask mask;
  for (const auto& [node, node_cpus] : node_cpus_) {
    if (node_cpus.Overlaps(cpus)) mask = mask.With(node);
  }
  return mask;
}

int CpuLayout::SocketOfNode(int node) const {
  auto it = socket_of_node_.find(node);
  return it == socket_of_node_.end() ? 0 : it->second;
}

}  // namespace qrm::cpu
