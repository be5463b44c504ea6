#include "advisor/report/nrt_builder.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/protocol_keys.h"

namespace qrm::advisor {
namespace {

namespace adm = ::qrm::admin::v1;
namespace rp = ::resourceplugin::v1alpha1;

using PerNode = std::map<uint64_t, double>;

struct ResourceFigures {
  PerNode capacity, allocatable, used;
};

Status AddList(const std::string& resource, const char* what,
               const google::protobuf::RepeatedPtrField<rp::TopologyAwareQuantity>& list,
               const std::set<uint64_t>& nodes, PerNode& out) {
  for (const rp::TopologyAwareQuantity& q : list) {
    if (q.topology_level() != rp::NUMA) continue;  // socket-level figures are not zones
    if (!nodes.contains(q.node()) || q.resource_value() < 0 || !std::isfinite(q.resource_value())) {
      return DataLossError(fmt::format(
          "qrm-host's {} of resource {} on NUMA node {}: {} does not fit a machine with nodes {}",
          what, resource, q.node(), q.resource_value(), fmt::join(nodes, ",")));
    }
    out[q.node()] += q.resource_value();
  }
  return Status::Ok();
}

// What a container of a shared CPU pool holds (every level but dedicated_cores): its request,
// where its allocation names the whole pool; nothing for system_cores, which run on the
// reserved CPUs when there are any; nullopt for every other allocation, which holds what its
// plugin allocated.
std::optional<double> PoolShare(const adm::ContainerAllocation& c, const std::string& resource,
                                bool cpus_reserved) {
  if (resource != "cpu" || c.qos_level() == "dedicated_cores") return std::nullopt;
  if (c.qos_level() == "system_cores" && cpus_reserved) return 0.0;
  auto request = c.requests().find(resource);
  return request == c.requests().end() ? 0.0 : request->second;
}

// Whether some CPUs are reserved (capacity above allocatable): system_cores run there.
bool CpusReserved(const std::map<std::string, ResourceFigures>& figures) {
  auto cpu = figures.find("cpu");
  if (cpu == figures.end()) return false;
  double capacity = 0, allocatable = 0;
  for (const auto& [node, v] : cpu->second.capacity) capacity += v;
  for (const auto& [node, v] : cpu->second.allocatable) allocatable += v;
  return capacity > allocatable;
}

// The NUMA nodes an allocation sits on, each with its share of it (summing to 1): its
// topology_assignments in proportion; else its first resource hint's nodes, evenly; else every
// node, evenly (a shared pool spans them).
std::map<uint64_t, double> Shares(const rp::ResourceAllocationInfo& info,
                                  const std::set<uint64_t>& nodes) {
  std::map<uint64_t, double> shares;
  double total = 0;
  for (const auto& [node, amount] : info.topology_assignments()) {
    if (amount <= 0 || !nodes.contains(node)) continue;
    shares[node] += static_cast<double>(amount);
    total += static_cast<double>(amount);
  }
  if (shares.empty() && info.has_resource_hints() && info.resource_hints().hints_size() > 0) {
    for (uint64_t n : info.resource_hints().hints(0).nodes()) {
      if (nodes.contains(n)) shares[n] = 1;
    }
    total = static_cast<double>(shares.size());
  }
  if (shares.empty()) {
    for (uint64_t n : nodes) shares[n] = 1;
    total = static_cast<double>(nodes.size());
  }
  for (auto& entry : shares) entry.second /= total;
  return shares;
}

// Where one container's allocation of a resource sits (see the header): the exact
// topology_assignments, or `pool_share` spread as Shares says.
void AddUse(const rp::ResourceAllocationInfo& info, std::optional<double> pool_share,
            const std::set<uint64_t>& nodes, PerNode& used) {
  if (!pool_share && !info.topology_assignments().empty()) {
    for (const auto& [node, amount] : info.topology_assignments()) {
      used[node] += static_cast<double>(amount);
    }
    return;
  }
  const double held = pool_share.value_or(info.allocated_quantity());
  if (held <= 0) return;
  for (const auto& [node, share] : Shares(info, nodes)) used[node] += held * share;
}

// Who is NUMA-bound on each zone, for the zone attributes.
struct ZoneHolders {
  std::set<std::string> bound_pods;  // uids
  std::set<std::string> roles;       // of the bound pods that have one
  bool exclusive = false;
  double dedicated_cpus = 0;
};

// The nodes a NUMA-bound container holds as the plugins' exclusivity rules see it: the memory
// plugin's for its memory, and the CPU plugin's for a dedicated container's CPUs (each gives a
// bound container its nodes as the first hint, else its topology_assignments say). A shared
// container's CPU hint and other plugins' (a NIC's node) bind nothing.
std::set<uint64_t> BoundNodes(const adm::ContainerAllocation& c, const std::set<uint64_t>& nodes) {
  std::set<uint64_t> bound;
  for (const auto& [resource, info] : c.resources()) {
    const bool binds =
        resource == "memory" || (resource == "cpu" && c.qos_level() == "dedicated_cores");
    if (!binds || info.allocated_quantity() <= 0) continue;
    std::set<uint64_t> here;
    if (info.has_resource_hints() && info.resource_hints().hints_size() > 0) {
      for (uint64_t n : info.resource_hints().hints(0).nodes()) here.insert(n);
    } else {
      for (const auto& [node, amount] : info.topology_assignments()) {
        if (amount > 0) here.insert(node);
      }
    }
    for (uint64_t n : here) {
      if (nodes.contains(n)) bound.insert(n);
    }
  }
  return bound;
}

void AddHolder(const std::string& pod_uid, const adm::ContainerAllocation& c,
               const std::set<uint64_t>& nodes, std::map<uint64_t, ZoneHolders>& holders) {
  if (c.numa_binding() || c.numa_exclusive()) {
    for (uint64_t n : BoundNodes(c, nodes)) {
      holders[n].bound_pods.insert(pod_uid);
      if (!c.pod_role().empty()) holders[n].roles.insert(c.pod_role());
      holders[n].exclusive = holders[n].exclusive || c.numa_exclusive();
    }
  }
  auto cpu = c.resources().find("cpu");
  if (c.qos_level() != "dedicated_cores" || cpu == c.resources().end()) return;
  for (const auto& [node, amount] : cpu->second.topology_assignments()) {
    if (nodes.contains(node)) holders[node].dedicated_cpus += static_cast<double>(amount);
  }
}

std::vector<cluster::NrtAttribute> ZoneAttributes(const ZoneHolders& h) {
  return {{kZoneNumaBoundPodsAttribute, std::to_string(h.bound_pods.size())},
          {kZoneNumaExclusiveAttribute, h.exclusive ? "true" : "false"},
          {kZoneDedicatedCpuAttribute, ResourceQuantity("cpu", h.dedicated_cpus).ToString()},
          {kZoneNumaBoundRolesAttribute, fmt::format("{}", fmt::join(h.roles, ","))}};
}

std::vector<cluster::NrtCost> Costs(const adm::NumaNode& node) {
  std::vector<cluster::NrtCost> costs;
  std::map<uint32_t, uint32_t> sorted(node.distances().begin(), node.distances().end());
  costs.reserve(sorted.size());
  for (const auto& [to, distance] : sorted) {
    costs.push_back({cluster::NumaZoneName(static_cast<int>(to)), static_cast<int64_t>(distance)});
  }
  return costs;
}

cluster::NrtResourceInfo Info(const std::string& resource, const ResourceFigures& f,
                              uint64_t node) {
  auto at = [node](const PerNode& m) {
    auto it = m.find(node);
    return it == m.end() ? 0.0 : it->second;
  };
  // Each figure within the one before it: a plugin reporting allocatable without capacity, or
  // more held than allocatable (an over-commit), must not make an object readers refuse.
  const double allocatable = at(f.allocatable);
  const double capacity = f.capacity.empty() ? allocatable : std::max(at(f.capacity), allocatable);
  const double available = std::clamp(allocatable - at(f.used), 0.0, allocatable);
  return {resource, ResourceQuantity(resource, capacity), ResourceQuantity(resource, allocatable),
          ResourceQuantity(resource, available)};
}

}  // namespace

Quantity ResourceQuantity(const std::string& resource, double amount) {
  amount = std::max(amount, 0.0);
  if (resource == "cpu") {
    return Quantity::FromMilli(static_cast<int64_t>(std::llround(amount * 1000)),
                               QuantityFormat::kDecimalSI);
  }
  if (resource == "memory" || resource.starts_with("hugepages-") || resource.ends_with("/memory")) {
    return Quantity::FromInt(static_cast<int64_t>(amount), QuantityFormat::kBinarySI);
  }
  if (amount == std::floor(amount)) {
    return Quantity::FromInt(static_cast<int64_t>(amount), QuantityFormat::kDecimalSI);
  }
  return Quantity::FromMilli(static_cast<int64_t>(std::llround(amount * 1000)),
                             QuantityFormat::kDecimalSI);
}

StatusOr<cluster::NodeResourceTopology> BuildNodeResourceTopology(
    const std::string& node_name, const adm::GetAllocatableResponse& allocatable,
    const adm::ListAllocationsResponse& allocations) {
  std::set<uint64_t> nodes;
  for (const adm::NumaNode& n : allocatable.numa_nodes()) nodes.insert(n.id());
  if (nodes.empty()) nodes.insert(0);              // a qrm-host before this field: one node
  std::map<std::string, ResourceFigures> figures;  // sorted by resource name
  for (const auto& [resource, a] : allocatable.resources()) {
    ResourceFigures& f = figures[resource];
    QRM_RETURN_IF_ERROR(AddList(resource, "capacity", a.topology_aware_capacity_quantity_list(),
                                nodes, f.capacity));
    QRM_RETURN_IF_ERROR(AddList(resource, "allocatable",
                                a.topology_aware_allocatable_quantity_list(), nodes,
                                f.allocatable));
  }
  std::map<uint64_t, ZoneHolders> holders;
  const bool cpus_reserved = CpusReserved(figures);
  for (const adm::PodAllocation& pod : allocations.pods()) {
    for (const adm::ContainerAllocation& c : pod.containers()) {
      for (const auto& [resource, info] : c.resources()) {
        auto f = figures.find(resource);
        if (f == figures.end()) continue;
        AddUse(info, PoolShare(c, resource, cpus_reserved), nodes, f->second.used);
      }
      AddHolder(pod.uid(), c, nodes, holders);
    }
  }
  cluster::NodeResourceTopology nrt;
  nrt.metadata.name = node_name;
  for (uint64_t id : nodes) {
    cluster::NrtZone zone;
    zone.name = cluster::NumaZoneName(static_cast<int>(id));
    zone.type = cluster::kNumaZoneType;
    for (const adm::NumaNode& n : allocatable.numa_nodes()) {
      if (n.id() == id) zone.costs = Costs(n);
    }
    for (const auto& [resource, f] : figures) {
      if (!f.allocatable.contains(id) && !f.capacity.contains(id)) continue;  // not on this node
      zone.resources.push_back(Info(resource, f, id));
    }
    zone.attributes = ZoneAttributes(holders[id]);
    nrt.zones.push_back(std::move(zone));
  }
  if (!allocatable.topology_policy().empty()) {
    nrt.attributes.push_back(
        {cluster::kTopologyManagerPolicyAttribute, allocatable.topology_policy()});
  }
  if (!allocatable.topology_scope().empty()) {
    nrt.attributes.push_back(
        {cluster::kTopologyManagerScopeAttribute, allocatable.topology_scope()});
  }
  return nrt;
}

}  // namespace qrm::advisor
