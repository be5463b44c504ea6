#include "qrmctl/cpu_map.h"

#include <algorithm>
#include <tuple>

#include "common/cpu_set.h"
#include "common/protocol_keys.h"

namespace qrm::ctl {
namespace {

constexpr const char kPodKeys[] = "abcdefghijklmnopqrstuvwxyzABDEFGHIJKLMNOPQTUVWXYZ0123456789";

CpuSet Parse(const std::string& text) {
  auto s = CpuSet::Parse(text);
  return s.ok() ? *s : CpuSet();
}

}  // namespace

namespace {

namespace admin = ::qrm::admin::v1;

// The pools as the plugins report them: every CPU reserved, reclaimed or shared; memory per node.
void AddPools(const machine::MachineTopology& machine,
              const admin::GetAllocatableResponse& allocatable, CpuMap& map) {
  CpuSet allocatable_cpus;
  CpuSet reclaimed_pool;  // as the CPU plugin reports it
  if (auto it = allocatable.resources().find("cpu"); it != allocatable.resources().end()) {
    for (const auto& q : it->second.topology_aware_allocatable_quantity_list()) {
      if (auto a = q.annotations().find(kCpusAnnotation); a != q.annotations().end()) {
        allocatable_cpus = allocatable_cpus.Union(Parse(a->second));
        map.cpu_plugin_reported = true;
      }
      if (auto a = q.annotations().find(kReclaimedCpusAnnotation); a != q.annotations().end()) {
        reclaimed_pool = reclaimed_pool.Union(Parse(a->second));
      }
    }
  }
  if (auto it = allocatable.resources().find("memory"); it != allocatable.resources().end()) {
    for (const auto& q : it->second.topology_aware_allocatable_quantity_list()) {
      map.memory[static_cast<int>(q.node())].allocatable = q.resource_value();
    }
    for (const auto& q : it->second.topology_aware_capacity_quantity_list()) {
      map.memory[static_cast<int>(q.node())].capacity = q.resource_value();
    }
  }
  for (const auto& cpu : machine.cpus) {
    CpuCell cell;
    if (map.cpu_plugin_reported && !allocatable_cpus.Contains(cpu.id)) {
      cell.owner = Owner::kReserved;
      cell.key = 'R';
    } else if (reclaimed_pool.Contains(cpu.id)) {
      cell.owner = Owner::kReclaimed;
      cell.key = 'C';
    } else {
      cell.owner = Owner::kShared;
      cell.key = 'S';
    }
    map.cpus[cpu.id] = cell;
  }
}

// One container's memory, spread evenly over the nodes of its hint.
void AddMemory(const admin::ContainerAllocation& c, CpuMap& map) {
  auto mem = c.resources().find("memory");
  if (mem == c.resources().end()) return;
  const auto& hints = mem->second.resource_hints().hints();
  if (hints.empty() || hints[0].nodes_size() == 0) return;
  const double share = mem->second.allocated_quantity() / hints[0].nodes_size();
  for (uint64_t node : hints[0].nodes()) map.memory[static_cast<int>(node)].allocated += share;
}

}  // namespace

CpuMap BuildCpuMap(const machine::MachineTopology& machine,
                   const admin::ListAllocationsResponse& allocations,
                   const admin::GetAllocatableResponse& allocatable) {
  CpuMap map;
  AddPools(machine, allocatable, map);
  // CPUs shared_cores containers run on: with a reclaimed pool of size 0, reclaimed_cores
  // containers share these, and the CPUs stay marked as the shared pool.
  CpuSet shared_cpus;
  for (const auto& pod : allocations.pods()) {
    for (const auto& c : pod.containers()) {
      if (c.qos_level() == "shared_cores") shared_cpus = shared_cpus.Union(Parse(c.cpuset_cpus()));
    }
  }
  // Keys in pod name order, so pictures of the same state always look the same.
  std::vector<const admin::PodAllocation*> pods;
  for (const auto& pod : allocations.pods()) pods.push_back(&pod);
  std::sort(pods.begin(), pods.end(), [](const auto* a, const auto* b) {
    return std::tie(a->namespace_(), a->name()) < std::tie(b->namespace_(), b->name());
  });
  size_t next_key = 0;
  for (const auto* pod : pods) {
    const std::string pod_name = pod->namespace_() + "/" + pod->name();
    char key = 0;
    for (const auto& c : pod->containers()) {
      AddMemory(c, map);
      const CpuSet cpus = Parse(c.cpuset_cpus());
      if (c.qos_level() == "dedicated_cores") {
        if (key == 0) {
          key = next_key < sizeof(kPodKeys) - 1 ? kPodKeys[next_key++] : '#';
          map.legend.emplace_back(key, pod_name);
        }
        for (int id : cpus) {
          if (map.cpus.contains(id)) map.cpus[id] = CpuCell{Owner::kDedicated, pod_name, key};
        }
      } else if (c.qos_level() == "reclaimed_cores") {
        for (int id : cpus) {
          auto it = map.cpus.find(id);
          if (it != map.cpus.end() && it->second.owner == Owner::kShared &&
              !shared_cpus.Contains(id)) {
            it->second = CpuCell{Owner::kReclaimed, "", 'C'};
          }
        }
      }
    }
  }
  return map;
}

}  // namespace qrm::ctl
