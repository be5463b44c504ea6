#include "machine/discovery.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <numa.h>

#include "machine/nic_discovery.h"
#include "machine/numa_layout.h"
#include "machine/sysfs.h"

namespace qrm::machine {

namespace {

bool IsPath(const std::string& path, const char* expected) {
  return std::filesystem::path(path).lexically_normal() == std::filesystem::path(expected) ||
         std::filesystem::path(path).lexically_normal() ==
             std::filesystem::path(std::string(expected) + "/");
}

// --- CPUs -------------------------------------------------------------------

Status ReadCpus(const std::string& cpu_dir, MachineTopology& topo) {
  auto online = sysfs::ReadCpuList(cpu_dir + "/online");
  if (!online.ok()) return online.status();
  if (online->Empty()) {
    return InvalidArgumentError(fmt::format("{}/online: no online CPUs", cpu_dir));
  }
  for (int id : *online) {
    const std::string dir = fmt::format("{}/cpu{}/topology", cpu_dir, id);
    CpuInfo cpu;
    cpu.id = id;
    auto package = sysfs::ReadInt(dir + "/physical_package_id");
    if (!package.ok()) return package.status();
    // Some platforms without package information print -1; they have one package.
    if (*package < -1 || *package > std::numeric_limits<int>::max()) {
      return InvalidArgumentError(
          fmt::format("{}/physical_package_id: value \"{}\" is out of range", dir, *package));
    }
    cpu.package_id = *package < 0 ? 0 : static_cast<int>(*package);

    QRM_ASSIGN_OR_RETURN(auto core, sysfs::ReadInt(dir + "/core_id"));
    if (core < 0 || core > std::numeric_limits<int>::max()) {
      return InvalidArgumentError(
          fmt::format("{}/core_id: value \"{}\" is out of range", dir, core));
    }
    cpu.core_id = static_cast<int>(core);

    QRM_ASSIGN_OR_RETURN(auto die_text, sysfs::ReadOptionalValue(dir + "/die_id"));
    if (die_text.has_value()) {
      QRM_ASSIGN_OR_RETURN(auto die, sysfs::ParseInt(dir + "/die_id", *die_text));
      if (die < -1 || die > std::numeric_limits<int>::max()) {
        return InvalidArgumentError(
            fmt::format("{}/die_id: value \"{}\" is out of range", dir, die));
      }
      cpu.die_id = die < 0 ? 0 : static_cast<int>(die);
    }

    QRM_ASSIGN_OR_RETURN(auto siblings_text,
                         sysfs::ReadOptionalValue(dir + "/thread_siblings_list"));
    if (siblings_text.has_value()) {
      QRM_ASSIGN_OR_RETURN(auto siblings,
                           sysfs::ParseCpuList(dir + "/thread_siblings_list", *siblings_text));
      if (!siblings.Contains(id)) {
        return InvalidArgumentError(
            fmt::format("{}/thread_siblings_list: value \"{}\" does not contain cpu {}", dir,
                        *siblings_text, id));
      }
      cpu.thread_siblings = siblings;
    }
    topo.cpus.push_back(std::move(cpu));
  }
  // Without thread_siblings_list, the siblings are the online CPUs of the same core.
  std::map<CoreKey, CpuSet> cores;
  for (const CpuInfo& cpu : topo.cpus) {
    cores[{cpu.package_id, cpu.die_id, cpu.core_id}].Add(cpu.id);
  }
  for (CpuInfo& cpu : topo.cpus) {
    if (cpu.thread_siblings.Empty()) {
      cpu.thread_siblings = cores[{cpu.package_id, cpu.die_id, cpu.core_id}];
    }
  }
  return Status::Ok();
}

// --- memory -----------------------------------------------------------------

struct MemInfo {
  std::optional<uint64_t> total_bytes;
  std::optional<uint64_t> free_bytes;
};

// Parses MemTotal and MemFree from /proc/meminfo ("MemTotal:  24682416 kB") or a node's
// meminfo ("Node 0 MemTotal:  13853252 kB"); other lines are ignored.
StatusOr<MemInfo> ParseMemInfo(const std::string& path, const std::string& content) {
  MemInfo info;
  std::istringstream lines(content);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string word; words >> word;) w.push_back(word);
    size_t key = 0;
    if (w.size() >= 2 && w[0] == "Node") key = 2;
    if (w.size() <= key) continue;
    std::optional<uint64_t>* target = nullptr;
    if (w[key] == "MemTotal:") target = &info.total_bytes;
    if (w[key] == "MemFree:") target = &info.free_bytes;
    if (target == nullptr) continue;
    const bool kb = w.size() == key + 3 && w[key + 2] == "kB";
    if (w.size() != key + 2 && !kb) {
      return InvalidArgumentError(
          fmt::format("{}: line \"{}\" is not \"{} <number> kB\"", path, line, w[key]));
    }
    auto value = sysfs::ParseUint(path, w[key + 1]);
    if (!value.ok()) return value.status();
    const uint64_t scale = kb ? 1024 : 1;
    if (*value > std::numeric_limits<uint64_t>::max() / scale) {
      return InvalidArgumentError(fmt::format("{}: value \"{}\" is too large", path, line));
    }
    *target = *value * scale;
  }
  if (!info.total_bytes.has_value()) {
    return InvalidArgumentError(fmt::format("{}: no MemTotal line", path));
  }
  return info;
}

StatusOr<MemInfo> ReadMemInfo(const std::string& path) {
  QRM_ASSIGN_OR_RETURN(auto content, sysfs::ReadFile(path));
  return ParseMemInfo(path, content);
}

// Huge page pools under `dir` (node<M>/hugepages or /sys/kernel/mm/hugepages); a missing
// directory has none.
StatusOr<std::vector<HugePagePool>> ReadHugePages(const std::string& dir) {
  std::vector<HugePagePool> pools;
  QRM_ASSIGN_OR_RETURN(auto entries, sysfs::ListDir(dir));
  for (const std::string& name : entries) {
    constexpr std::string_view kPrefix = "hugepages-";
    constexpr std::string_view kSuffix = "kB";
    if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) continue;
    const std::string pool_dir = fmt::format("{}/{}", dir, name);
    QRM_ASSIGN_OR_RETURN(
        auto size_kb, sysfs::ParseUint(pool_dir, std::string_view(name).substr(
                                                     kPrefix.size(), name.size() - kPrefix.size() -
                                                                         kSuffix.size())));
    HugePagePool pool;
    pool.page_size_bytes = size_kb * 1024;
    QRM_ASSIGN_OR_RETURN(auto total, sysfs::ReadUint(pool_dir + "/nr_hugepages"));
    pool.total_pages = total;
    QRM_ASSIGN_OR_RETURN(auto free, sysfs::ReadUint(pool_dir + "/free_hugepages"));
    pool.free_pages = free;
    pools.push_back(pool);
  }
  std::sort(pools.begin(), pools.end(), [](const HugePagePool& a, const HugePagePool& b) {
    return a.page_size_bytes < b.page_size_bytes;
  });
  return pools;
}

// --- NUMA nodes ---------------------------------------------------------------

Status ReadNodes(const std::string& node_dir, const CpuSet& online, MachineTopology& topo) {
  auto ids = ReadNodeIds(node_dir);
  if (!ids.ok()) return ids.status();
  CpuSet assigned;
  for (int id : *ids) {
    const std::string dir = fmt::format("{}/node{}", node_dir, id);
    NumaNodeInfo node;
    node.id = id;
    auto cpus = sysfs::ReadCpuList(dir + "/cpulist");
    if (!cpus.ok()) return cpus.status();
    node.cpus = cpus->Intersection(online);
    if (node.cpus.Overlaps(assigned)) {
      return InvalidArgumentError(
          fmt::format("{}/cpulist: value \"{}\" repeats cpus {} of another node", dir,
                      cpus->ToString(), node.cpus.Intersection(assigned).ToString()));
    }
    assigned = assigned.Union(node.cpus);

    QRM_ASSIGN_OR_RETURN(auto mem, ReadMemInfo(dir + "/meminfo"));
    node.memory_total_bytes = *mem.total_bytes;
    node.memory_free_bytes = mem.free_bytes.value_or(0);

    QRM_ASSIGN_OR_RETURN(const std::optional<std::vector<int>> distances,
                         ReadNodeDistances(node_dir, id, *ids));
    if (distances.has_value()) {
      for (size_t i = 0; i < distances->size(); ++i) node.distances[(*ids)[i]] = (*distances)[i];
    }

    QRM_ASSIGN_OR_RETURN(auto pools, ReadHugePages(dir + "/hugepages"));
    node.hugepages = std::move(pools);
    topo.nodes.push_back(std::move(node));
  }

  // CPUs no node claims: node 0 of a one-node machine, an error otherwise.
  const CpuSet orphans = online.Difference(assigned);
  if (!orphans.Empty()) {
    if (topo.nodes.size() != 1) {
      return InvalidArgumentError(
          fmt::format("cpu {} is online but in no NUMA node's cpulist under {} ({} nodes)",
                      *orphans.First(), node_dir, topo.nodes.size()));
    }
    topo.nodes[0].cpus = topo.nodes[0].cpus.Union(orphans);
  }
  return Status::Ok();
}

Status ReadSingleNode(const DiscoveryOptions& options, const CpuSet& online,
                      MachineTopology& topo) {
  QRM_ASSIGN_OR_RETURN(auto mem, ReadMemInfo(options.procfs_root + "/meminfo"));
  NumaNodeInfo node;
  node.id = 0;
  node.cpus = online;
  node.memory_total_bytes = *mem.total_bytes;
  node.memory_free_bytes = mem.free_bytes.value_or(0);
  node.distances[0] = 10;
  QRM_ASSIGN_OR_RETURN(auto pools, ReadHugePages(options.sysfs_root + "/kernel/mm/hugepages"));
  node.hugepages = std::move(pools);
  topo.nodes.push_back(std::move(node));
  return Status::Ok();
}

// Fills what sysfs lacked from libnuma and records disagreements. The real machine only.
void CrossCheckWithLibnuma(MachineTopology& topo) {
  if (numa_available() < 0) {
    if (topo.nodes.size() > 1) {
      topo.warnings.push_back(fmt::format(
          "libnuma reports NUMA as unavailable, sysfs lists {} nodes", topo.nodes.size()));
    }
    return;
  }
  int with_memory = 0;
  for (NumaNodeInfo& node : topo.nodes) {
    if (node.memory_total_bytes > 0) ++with_memory;
    long long free_bytes = 0;
    const long long total = numa_node_size64(node.id, &free_bytes);
    if (total < 0) {
      topo.warnings.push_back(fmt::format("libnuma knows no memory size of node {}", node.id));
    } else {
      const double diff =
          std::fabs(static_cast<double>(total) - static_cast<double>(node.memory_total_bytes));
      if (diff > 0.01 * static_cast<double>(std::max<uint64_t>(node.memory_total_bytes, 1))) {
        topo.warnings.push_back(
            fmt::format("node {}: libnuma reports {} bytes of memory, sysfs {}; using sysfs",
                        node.id, total, node.memory_total_bytes));
      }
    }
    if (node.distances.empty()) {
      for (const NumaNodeInfo& other : topo.nodes) {
        const int d = numa_distance(node.id, other.id);
        if (d > 0) node.distances[other.id] = d;
      }
    }
  }
  const int configured = numa_num_configured_nodes();
  if (configured != with_memory) {
    topo.warnings.push_back(
        fmt::format("libnuma counts {} nodes with memory, sysfs {}", configured, with_memory));
  }
}

}  // namespace

bool IsRealSysfs(const DiscoveryOptions& options) {
  return IsPath(options.sysfs_root, "/sys");
}

StatusOr<MachineTopology> Discover(const DiscoveryOptions& options) {
  MachineTopology topo;
  const std::string cpu_dir = options.sysfs_root + "/devices/system/cpu";
  QRM_RETURN_IF_ERROR(ReadCpus(cpu_dir, topo));
  const CpuSet online = topo.OnlineCpus();

  const std::string node_dir = options.sysfs_root + "/devices/system/node";
  if (sysfs::IsDirectory(node_dir)) {
    QRM_RETURN_IF_ERROR(ReadNodes(node_dir, online, topo));
  } else {
    QRM_RETURN_IF_ERROR(ReadSingleNode(options, online, topo));
  }
  for (const NumaNodeInfo& node : topo.nodes) {
    for (int cpu : node.cpus) {
      auto it = std::lower_bound(topo.cpus.begin(), topo.cpus.end(), cpu,
                                 [](const CpuInfo& c, int id) { return c.id < id; });
      it->node = node.id;
    }
  }

  if (options.use_libnuma && IsRealSysfs(options) && IsPath(options.procfs_root, "/proc")) {
    CrossCheckWithLibnuma(topo);
  }
  if (options.discover_nics) QRM_RETURN_IF_ERROR(DiscoverNics(options, topo));
  return topo;
}

}  // namespace qrm::machine
