#include "cluster/drain/numa_state.h"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "common/protocol_keys.h"
#include "qrm/topology/policy_names.h"

namespace qrm::cluster::drain {
namespace {

// Far above any node (the kubelet runs a few hundred pods on at most thousands of CPUs), and
// far below where adding the pods the planner places could overflow.
constexpr int64_t kMaxBoundPods = 1'000'000;
constexpr int64_t kMaxDedicatedCpuMilli = int64_t{1} << 40;

Status CheckAmount(const std::string& node, int zone, const std::string& resource,
                   const ResourceAmount& a) {
  if (a.free < 0 || a.capacity < 0) {
    return InvalidArgumentError(
        fmt::format("node {} NUMA zone {} resource {}: negative amount (available {}, capacity {})",
                    node, zone, resource, a.free, a.capacity));
  }
  if (a.free > a.capacity) {
    return InvalidArgumentError(
        fmt::format("node {} NUMA zone {} resource {}: available {} is above capacity {}", node,
                    zone, resource, a.free, a.capacity));
  }
  return Status::Ok();
}

Status CheckZone(const std::string& node, const NumaZone& zone) {
  if (zone.binding.bound_pods < 0 || zone.binding.dedicated_cpu_milli < 0) {
    return InvalidArgumentError(fmt::format(
        "node {} NUMA zone {}: negative binding ({} NUMA-bound pods, {}m dedicated CPU)", node,
        zone.id, zone.binding.bound_pods, zone.binding.dedicated_cpu_milli));
  }
  QRM_RETURN_IF_ERROR(CheckAmount(node, zone.id, "cpu", zone.cpu_milli));
  QRM_RETURN_IF_ERROR(CheckAmount(node, zone.id, "memory", zone.memory_bytes));
  for (const auto& [name, amount] : zone.extended) {
    QRM_RETURN_IF_ERROR(CheckAmount(node, zone.id, name, amount));
  }
  return Status::Ok();
}

// CPU in millicores, memory-like resources in bytes, others in whole units.
int64_t Amount(const std::string& resource, const Quantity& q) {
  return resource == "cpu" ? q.MilliValue() : q.Value();
}

Status AddResource(const std::string& node, const cluster::NrtResourceInfo& r, NumaZone& zone) {
  if (r.available.AsDouble() < 0 || r.capacity.AsDouble() < 0) {
    return InvalidArgumentError(
        fmt::format("node {} NUMA zone {} resource {}: negative amount (available {}, capacity {})",
                    node, zone.id, r.name, r.available.ToString(), r.capacity.ToString()));
  }
  MutableZoneAmount(zone, r.name) = {Amount(r.name, r.available), Amount(r.name, r.capacity)};
  return Status::Ok();
}

// The dedicated-cpu attribute's quantity in millicores.
StatusOr<int64_t> DedicatedCpuMilli(const std::string& text) {
  auto cpu = Quantity::Parse(text);
  if (!cpu.ok()) return cpu.status();
  if (cpu->AsDouble() < 0 || cpu->MilliValue() > kMaxDedicatedCpuMilli) {
    return InvalidArgumentError(
        fmt::format("\"{}\" is not a CPU amount (0 to {}m)", text, kMaxDedicatedCpuMilli));
  }
  return cpu->MilliValue();
}

// The roles attribute (absent from an older qrm-advisor's zones: no roles known).
StatusOr<ZoneBinding> ReadRoles(const std::map<std::string, std::string>& values,
                                const std::string& node, int zone, ZoneBinding b) {
  auto it = values.find(kZoneNumaBoundRolesAttribute);
  if (it == values.end() || it->second.empty()) return b;
  std::set<std::string> roles;
  for (size_t start = 0; start <= it->second.size();) {
    size_t comma = it->second.find(',', start);
    if (comma == std::string::npos) comma = it->second.size();
    std::string role = it->second.substr(start, comma - start);
    if (role.empty()) {
      return InvalidArgumentError(
          fmt::format("node {} NUMA zone {}: attribute {}: \"{}\" has an empty role", node, zone,
                      kZoneNumaBoundRolesAttribute, it->second));
    }
    roles.insert(std::move(role));
    start = comma + 1;
  }
  b.roles.assign(roles.begin(), roles.end());
  return b;
}

// qrm's zone attributes: the first three, or none (another writer's zone: binding unknown).
StatusOr<ZoneBinding> BindingFromNrt(const std::string& node, int zone,
                                     const std::vector<cluster::NrtAttribute>& attributes) {
  const char* names[] = {kZoneNumaBoundPodsAttribute, kZoneNumaExclusiveAttribute,
                         kZoneDedicatedCpuAttribute};
  std::map<std::string, std::string> values;  // qrm's; other writers' attributes are theirs
  for (const cluster::NrtAttribute& a : attributes) {
    const bool ours = a.name == kZoneNumaBoundRolesAttribute ||
                      std::find(std::begin(names), std::end(names), a.name) != std::end(names);
    if (ours && !values.emplace(a.name, a.value).second) {
      return InvalidArgumentError(
          fmt::format("node {} NUMA zone {}: attribute {} is listed twice", node, zone, a.name));
    }
  }
  const auto present = std::count_if(std::begin(names), std::end(names),
                                     [&](const char* n) { return values.contains(n); });
  if (present == 0) return ZoneBinding{};
  auto bad = [&](const char* name, const std::string& why) {
    return InvalidArgumentError(
        fmt::format("node {} NUMA zone {}: attribute {}: {}", node, zone, name, why));
  };
  for (const char* n : names) {
    if (!values.contains(n)) return bad(n, "missing (qrm-advisor writes all three)");
  }
  ZoneBinding b;
  b.known = true;
  const std::string& pods = values[kZoneNumaBoundPodsAttribute];
  const auto parsed = std::from_chars(pods.data(), pods.data() + pods.size(), b.bound_pods);
  if (pods.empty() || parsed.ec != std::errc() || parsed.ptr != pods.data() + pods.size() ||
      b.bound_pods < 0 || b.bound_pods > kMaxBoundPods) {
    return bad(kZoneNumaBoundPodsAttribute,
               fmt::format("\"{}\" is not a pod count (0 to {})", pods, kMaxBoundPods));
  }
  const std::string& exclusive = values[kZoneNumaExclusiveAttribute];
  if (exclusive != "true" && exclusive != "false") {
    return bad(kZoneNumaExclusiveAttribute,
               fmt::format("\"{}\" is neither \"true\" nor \"false\"", exclusive));
  }
  b.exclusive = exclusive == "true";
  StatusOr<int64_t> cpu = DedicatedCpuMilli(values[kZoneDedicatedCpuAttribute]);
  if (!cpu.ok()) return bad(kZoneDedicatedCpuAttribute, std::string(cpu.status().message()));
  b.dedicated_cpu_milli = *cpu;
  return ReadRoles(values, node, zone, b);
}

StatusOr<NumaZone> ZoneFromNrt(const std::string& node, const cluster::NrtZone& z) {
  auto id = cluster::NumaZoneId(z.name);
  if (!id.ok()) {
    return InvalidArgumentError(
        fmt::format("node {} zone \"{}\" of type Node: {}", node, z.name, id.status().message()));
  }
  NumaZone zone;
  zone.id = *id;
  std::set<std::string> seen;
  for (const cluster::NrtResourceInfo& r : z.resources) {
    if (!seen.insert(r.name).second) {
      return InvalidArgumentError(
          fmt::format("node {} NUMA zone {}: resource {} is listed twice", node, zone.id, r.name));
    }
    QRM_RETURN_IF_ERROR(AddResource(node, r, zone));
  }
  QRM_ASSIGN_OR_RETURN(zone.binding, BindingFromNrt(node, zone.id, z.attributes));
  return zone;
}

// The distance matrix from the zones' costs, or empty when some zone lacks a cost to some zone
// (then prefer-closest-numa-nodes has nothing to compare).
std::vector<std::vector<uint32_t>> Distances(const std::map<int, const cluster::NrtZone*>& zones) {
  std::vector<int> ids;
  ids.reserve(zones.size());
  for (const auto& entry : zones) ids.push_back(entry.first);
  std::vector<std::vector<uint32_t>> rows;
  for (const auto& entry : zones) {
    std::map<int, int64_t> costs;
    for (const cluster::NrtCost& c : entry.second->costs) {
      auto to = cluster::NumaZoneId(c.name);
      if (to.ok() && c.value >= 0) costs[*to] = c.value;
    }
    std::vector<uint32_t> row;
    for (int id : ids) {
      auto it = costs.find(id);
      if (it == costs.end()) return {};
      row.push_back(static_cast<uint32_t>(std::min<int64_t>(it->second, UINT32_MAX)));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

StatusOr<std::string> Attribute(const cluster::NodeResourceTopology& nrt, const char* name,
                                const std::string& fallback) {
  std::optional<std::string> value;
  for (const cluster::NrtAttribute& a : nrt.attributes) {
    if (a.name != name) continue;
    if (value) {
      return InvalidArgumentError(fmt::format(
          "NodeResourceTopology {}: attribute {} is listed twice", nrt.metadata.name, name));
    }
    value = a.value;
  }
  return value ? *value : fallback;
}

// The zone with this id in `zones` (a const vector or not), or nullptr.
template <typename Zones>
auto ZoneIn(Zones& zones, int id) -> decltype(&zones.front()) {
  for (auto& z : zones) {
    if (z.id == id) return &z;
  }
  return nullptr;
}

}  // namespace

const NumaZone* NumaNodeState::Zone(int id) const {
  return ZoneIn(zones, id);
}

NumaZone* NumaNodeState::Zone(int id) {
  return ZoneIn(zones, id);
}

ResourceAmount ZoneAmount(const NumaZone& zone, const std::string& resource) {
  if (resource == "cpu") return zone.cpu_milli;
  if (resource == "memory") return zone.memory_bytes;
  auto it = zone.extended.find(resource);
  return it == zone.extended.end() ? ResourceAmount{} : it->second;
}

ResourceAmount& MutableZoneAmount(NumaZone& zone, const std::string& resource) {
  if (resource == "cpu") return zone.cpu_milli;
  if (resource == "memory") return zone.memory_bytes;
  return zone.extended[resource];
}

StatusOr<NumaNodeState> MakeNumaNodeState(std::string node, std::vector<NumaZone> zones,
                                          topology::Policy policy, topology::Scope scope,
                                          std::vector<std::vector<uint32_t>> distances) {
  if (zones.empty()) {
    return InvalidArgumentError(fmt::format("node {}: no NUMA zone", node));
  }
  if (zones.size() > static_cast<size_t>(kMaxNumaZones)) {
    return InvalidArgumentError(
        fmt::format("node {}: {} NUMA zones, the drain planner takes at "
                    "most {}",
                    node, zones.size(), kMaxNumaZones));
  }
  std::sort(zones.begin(), zones.end(),
            [](const NumaZone& a, const NumaZone& b) { return a.id < b.id; });
  std::vector<int> ids;
  for (const NumaZone& z : zones) {
    if (!ids.empty() && ids.back() == z.id) {
      return InvalidArgumentError(fmt::format("node {}: NUMA zone {} is listed twice", node, z.id));
    }
    QRM_RETURN_IF_ERROR(CheckZone(node, z));
    ids.push_back(z.id);
  }
  auto info = topology::NumaInfo::Create(ids, std::move(distances));
  if (!info.ok()) {
    return InvalidArgumentError(fmt::format("node {}: {}", node, info.status().message()));
  }
  NumaNodeState state;
  state.node = std::move(node);
  state.zones = std::move(zones);
  state.policy = policy;
  state.scope = scope;
  state.numa_info = std::make_shared<const topology::NumaInfo>(std::move(*info));
  return state;
}

StatusOr<NumaNodeState> NumaNodeStateFromNrt(const cluster::NodeResourceTopology& nrt) {
  const std::string& node = nrt.metadata.name;
  std::vector<NumaZone> zones;
  std::map<int, const cluster::NrtZone*> sources;  // by id, for the distances
  for (const cluster::NrtZone& z : nrt.zones) {
    if (z.type != cluster::kNumaZoneType) continue;
    QRM_ASSIGN_OR_RETURN(NumaZone zone, ZoneFromNrt(node, z));
    sources.emplace(zone.id, &z);
    zones.push_back(std::move(zone));
  }
  QRM_ASSIGN_OR_RETURN(std::string policy_name,
                       Attribute(nrt, cluster::kTopologyManagerPolicyAttribute, "none"));
  QRM_ASSIGN_OR_RETURN(std::string scope_name,
                       Attribute(nrt, cluster::kTopologyManagerScopeAttribute, "container"));
  auto policy = topology::ParsePolicy(policy_name);
  if (!policy.ok()) {
    return InvalidArgumentError(fmt::format("NodeResourceTopology {} attribute {}: {}", node,
                                            cluster::kTopologyManagerPolicyAttribute,
                                            policy.status().message()));
  }
  auto scope = topology::ParseScope(scope_name);
  if (!scope.ok()) {
    return InvalidArgumentError(fmt::format("NodeResourceTopology {} attribute {}: {}", node,
                                            cluster::kTopologyManagerScopeAttribute,
                                            scope.status().message()));
  }
  // A duplicate id leaves the distances incomplete; MakeNumaNodeState reports it.
  auto distances =
      sources.size() == zones.size() ? Distances(sources) : std::vector<std::vector<uint32_t>>{};
  return MakeNumaNodeState(node, std::move(zones), *policy, *scope, std::move(distances));
}

}  // namespace qrm::cluster::drain
