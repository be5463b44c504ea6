#include "machine/topology.h"

#include <algorithm>

#include <fmt/format.h>

namespace qrm::machine {

namespace {

std::string Bytes(uint64_t bytes) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  constexpr double kMiB = 1024.0 * 1024.0;
  const double b = static_cast<double>(bytes);
  if (b >= kGiB) return fmt::format("{:.2f} GiB", b / kGiB);
  return fmt::format("{:.2f} MiB", b / kMiB);
}

std::string Plural(int n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace

CpuSet MachineTopology::OnlineCpus() const {
  CpuSet set;
  for (const CpuInfo& cpu : cpus) set.Add(cpu.id);
  return set;
}

const CpuInfo* MachineTopology::Cpu(int id) const {
  auto it = std::lower_bound(cpus.begin(), cpus.end(), id,
                             [](const CpuInfo& c, int cpu) { return c.id < cpu; });
  return it != cpus.end() && it->id == id ? &*it : nullptr;
}

std::optional<int> MachineTopology::NodeOfCpu(int cpu) const {
  const CpuInfo* info = Cpu(cpu);
  if (info == nullptr) return std::nullopt;
  return info->node;
}

std::vector<Core> MachineTopology::Cores() const {
  std::map<CoreKey, Core> by_key;
  for (const CpuInfo& cpu : cpus) {
    const CoreKey key{cpu.package_id, cpu.die_id, cpu.core_id};
    auto [it, inserted] = by_key.try_emplace(key);
    if (inserted) {
      it->second.key = key;
      it->second.node = cpu.node;
    }
    it->second.threads.Add(cpu.id);
  }
  std::vector<Core> out;
  out.reserve(by_key.size());
  for (auto& [key, core] : by_key) out.push_back(std::move(core));
  return out;
}

CpuSet MachineTopology::CoreThreads(int cpu) const {
  const CpuInfo* info = Cpu(cpu);
  if (info == nullptr) return {};
  CpuSet threads;
  for (const CpuInfo& other : cpus) {
    if (other.package_id == info->package_id && other.die_id == info->die_id &&
        other.core_id == info->core_id) {
      threads.Add(other.id);
    }
  }
  return threads;
}

int MachineTopology::ThreadsPerCore() const {
  int most = 0;
  for (const Core& core : Cores()) most = std::max(most, core.threads.Size());
  return most;
}

std::map<int, CpuSet> MachineTopology::Sockets() const {
  std::map<int, CpuSet> sockets;
  for (const CpuInfo& cpu : cpus) sockets[cpu.package_id].Add(cpu.id);
  return sockets;
}

CpuSet MachineTopology::SocketCpus(int package_id) const {
  CpuSet set;
  for (const CpuInfo& cpu : cpus) {
    if (cpu.package_id == package_id) set.Add(cpu.id);
  }
  return set;
}

NumaMask MachineTopology::NodeMask() const {
  NumaMask mask;
  for (const NumaNodeInfo& node : nodes) {
    if (node.id >= 0 && node.id < NumaMask::kMaxNodes) mask = mask.With(node.id);
  }
  return mask;
}

NumaMask MachineTopology::NodesWithCpus() const {
  NumaMask mask;
  for (const NumaNodeInfo& node : nodes) {
    if (!node.cpus.Empty() && node.id >= 0 && node.id < NumaMask::kMaxNodes) {
      mask = mask.With(node.id);
    }
  }
  return mask;
}

const NumaNodeInfo* MachineTopology::Node(int id) const {
  for (const NumaNodeInfo& node : nodes) {
    if (node.id == id) return &node;
  }
  return nullptr;
}

CpuSet MachineTopology::NodeCpus(int node) const {
  const NumaNodeInfo* info = Node(node);
  return info != nullptr ? info->cpus : CpuSet();
}

std::map<int, CpuSet> MachineTopology::NodeCpuSets() const {
  std::map<int, CpuSet> sets;
  for (const NumaNodeInfo& node : nodes) sets[node.id] = node.cpus;
  return sets;
}

std::optional<int> MachineTopology::Distance(int from, int to) const {
  const NumaNodeInfo* info = Node(from);
  if (info == nullptr) return std::nullopt;
  auto it = info->distances.find(to);
  if (it == info->distances.end()) return std::nullopt;
  return it->second;
}

uint64_t MachineTopology::TotalMemoryBytes() const {
  uint64_t total = 0;
  for (const NumaNodeInfo& node : nodes) total += node.memory_total_bytes;
  return total;
}

std::vector<const NicInfo*> MachineTopology::NicsOnNode(int node) const {
  std::vector<const NicInfo*> out;
  for (const NicInfo& nic : nics) {
    if (nic.numa_node == node) out.push_back(&nic);
  }
  return out;
}

const NicInfo* MachineTopology::Nic(const std::string& name, const std::string& netns) const {
  for (const NicInfo& nic : nics) {
    if (nic.name == name && nic.netns == netns) return &nic;
  }
  return nullptr;
}

std::string MachineTopology::Summary() const {
  return fmt::format("{} ({}), {}, {}, {} threads/core, {}, {}", Plural(NumCpus(), "cpu", "cpus"),
                     OnlineCpus().ToString(),
                     Plural(static_cast<int>(Sockets().size()), "socket", "sockets"),
                     Plural(static_cast<int>(Cores().size()), "core", "cores"), ThreadsPerCore(),
                     Plural(NumNodes(), "numa node", "numa nodes"),
                     Plural(static_cast<int>(nics.size()), "nic", "nics"));
}

std::string MachineTopology::Describe() const {
  std::string out = Summary();
  for (const NumaNodeInfo& node : nodes) {
    std::string distances;
    for (const auto& [to, d] : node.distances) {
      distances += fmt::format("{}{}", distances.empty() ? "" : " ", d);
    }
    out += fmt::format("\nnode {}: cpus {}, memory {} (free {}), distances {}", node.id,
                       node.cpus.Empty() ? "none" : node.cpus.ToString(),
                       Bytes(node.memory_total_bytes), Bytes(node.memory_free_bytes),
                       distances.empty() ? "unknown" : distances);
    for (const HugePagePool& pool : node.hugepages) {
      if (pool.total_pages == 0) continue;
      out += fmt::format(", hugepages-{}kB {}/{} free", pool.page_size_bytes / 1024,
                         pool.free_pages, pool.total_pages);
    }
  }
  for (const NicInfo& nic : nics) {
    std::string where;
    if (!nic.netns.empty()) where = fmt::format(" (netns {} {})", nic.netns, nic.netns_path);
    std::string addresses;
    for (const auto* list : {&nic.ipv4, &nic.ipv6}) {
      for (const std::string& a : *list) addresses += " " + a;
    }
    out += fmt::format("\nnic {}{}: node {}, {} Mb/s{}, {}, {}{}{}", nic.name, where,
                       nic.numa_node < 0 ? std::string("unknown") : std::to_string(nic.numa_node),
                       nic.speed_mbps, nic.speed_known ? "" : " (unknown)",
                       nic.operstate.empty() ? "unknown" : nic.operstate,
                       nic.mac.empty() ? "no mac" : nic.mac, nic.is_virtual ? ", virtual" : "",
                       addresses.empty() ? "" : "," + addresses);
  }
  for (const std::string& warning : warnings) out += "\nwarning: " + warning;
  return out;
}

}  // namespace qrm::machine
