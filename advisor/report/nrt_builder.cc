#include "advisor/report/nrt_builder.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

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

// Where one container's allocation of a resource sits (see the header).
void AddUse(const rp::ResourceAllocationInfo& info, const std::set<uint64_t>& nodes,
            PerNode& used) {
  if (!info.topology_assignments().empty()) {
    for (const auto& [node, amount] : info.topology_assignments()) {
      used[node] += static_cast<double>(amount);
    }
    return;
  }
  if (info.allocated_quantity() <= 0) return;
  std::vector<uint64_t> where;
  if (info.has_resource_hints() && info.resource_hints().hints_size() > 0) {
    for (uint64_t n : info.resource_hints().hints(0).nodes()) {
      if (nodes.contains(n)) where.push_back(n);
    }
  }
  if (where.empty()) where.assign(nodes.begin(), nodes.end());
  for (uint64_t n : where) used[n] += info.allocated_quantity() / static_cast<double>(where.size());
}

std::vector<cluster::NrtCost> Costs(const adm::NumaNode& node) {
  std::vector<cluster::NrtCost> costs;
  std::map<uint32_t, uint32_t> sorted(node.distances().begin(), node.distances().end());
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
  for (const adm::PodAllocation& pod : allocations.pods()) {
    for (const adm::ContainerAllocation& c : pod.containers()) {
      for (const auto& [resource, info] : c.resources()) {
        auto f = figures.find(resource);
        if (f != figures.end()) AddUse(info, nodes, f->second.used);
      }
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
