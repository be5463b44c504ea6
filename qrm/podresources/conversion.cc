#include "qrm/podresources/conversion.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "common/cpu_set.h"

namespace qrm::podresources {
namespace {

namespace rp = ::resourceplugin::v1alpha1;

void AddNodes(const rp::ResourceAllocationInfo& info, ::v1::TopologyInfo* topology) {
  if (!info.has_resource_hints()) return;
  // The hint the allocation was made for; its nodes are where the resource lives.
  for (const auto& hint : info.resource_hints().hints()) {
    for (uint64_t node : hint.nodes()) topology->add_nodes()->set_id(static_cast<int64_t>(node));
    break;
  }
}

// The nodes the memory's bytes come from: the hint's, else those of topology_assignments,
// else a CpusetMems result, else (memory bound to no node) every node of the machine.
void AddMemoryNodes(const rp::ResourceAllocationInfo& info, NumaMask machine,
                    ::v1::TopologyInfo* topology) {
  AddNodes(info, topology);
  if (topology->nodes_size() > 0) return;
  std::set<uint64_t> assigned;
  for (const auto& [node, bytes] : info.topology_assignments()) assigned.insert(node);
  for (uint64_t node : assigned) topology->add_nodes()->set_id(static_cast<int64_t>(node));
  if (topology->nodes_size() > 0) return;
  NumaMask nodes = machine;
  if (info.oci_property_name() == "CpusetMems") {
    if (auto parsed = NumaMask::Parse(info.allocation_result()); parsed.ok() && !parsed->empty()) {
      nodes = *parsed;
    }
  }
  for (int node : nodes.Nodes()) topology->add_nodes()->set_id(node);
}

// One device id per unit of an allocatable quantity (see the header for the names).
std::vector<std::string> DeviceIds(const std::string& resource,
                                   const rp::TopologyAwareQuantity& q) {
  const bool named = !q.name().empty() && q.name() != resource;
  const double value = std::isfinite(q.resource_value()) ? q.resource_value() : 0;
  const int64_t units = std::llround(std::clamp(value, 0.0, static_cast<double>(kMaxDeviceUnits)));
  if (named && units <= 1) return {q.name()};  // one device (a value of 0 still names it)
  const std::string base = named ? q.name() : resource;
  std::vector<std::string> ids;
  ids.reserve(static_cast<size_t>(units));
  for (int64_t k = 0; k < units; ++k) ids.push_back(fmt::format("{}-numa{}-{}", base, q.node(), k));
  return ids;
}

void AddCpuIds(const std::string& cpuset_text, google::protobuf::RepeatedField<int64_t>* out) {
  auto cpus = CpuSet::Parse(cpuset_text);
  if (!cpus.ok()) return;  // validated at admission; a foreign value is left out, not guessed
  for (int cpu : cpus->Ids()) out->Add(cpu);
}

std::vector<std::string> SplitIds(std::string_view text) {
  std::vector<std::string> ids;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view id = text.substr(0, comma);
    if (!id.empty()) ids.emplace_back(id);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return ids;
}

}  // namespace

::v1::PodResources ToPodResources(const state::PodAllocation& pod,
                                  const PodResourcesMapping& mapping) {
  ::v1::PodResources out;
  out.set_name(pod.name);
  out.set_namespace_(pod.ns);
  for (const auto& [name, container] : pod.containers) {
    ::v1::ContainerResources* c = out.add_containers();
    c->set_name(name);
    for (const auto& [resource, info] : container.resources) {
      if (resource == mapping.cpu_resource) {
        AddCpuIds(info.allocation_result(), c->mutable_cpu_ids());
      } else if (resource == mapping.memory_resource) {
        ::v1::ContainerMemory* m = c->add_memory();
        m->set_memory_type("memory");
        m->set_size(static_cast<uint64_t>(info.allocated_quantity()));
        AddMemoryNodes(info, mapping.machine_nodes, m->mutable_topology());
      } else if (mapping.device_resources.contains(resource)) {
        std::vector<std::string> ids = SplitIds(info.allocation_result());
        if (ids.empty()) continue;
        ::v1::ContainerDevices* d = c->add_devices();
        d->set_resource_name(resource);
        for (std::string& id : ids) d->add_device_ids(std::move(id));
        AddNodes(info, d->mutable_topology());
      }
    }
  }
  return out;
}

::v1::AllocatableResourcesResponse ToAllocatable(
    const std::map<std::string, rp::AllocatableTopologyAwareResource>& allocatable,
    const PodResourcesMapping& mapping) {
  ::v1::AllocatableResourcesResponse out;
  CpuSet cpus;
  for (const auto& [resource, res] : allocatable) {
    for (const rp::TopologyAwareQuantity& q : res.topology_aware_allocatable_quantity_list()) {
      if (resource == mapping.cpu_resource) {
        auto it = q.annotations().find(kCpusAnnotation);
        if (it == q.annotations().end()) continue;
        if (auto parsed = CpuSet::Parse(it->second); parsed.ok()) cpus = cpus.Union(*parsed);
      } else if (resource == mapping.memory_resource) {
        ::v1::ContainerMemory* m = out.add_memory();
        m->set_memory_type("memory");
        m->set_size(static_cast<uint64_t>(q.resource_value()));
        m->mutable_topology()->add_nodes()->set_id(static_cast<int64_t>(q.node()));
      } else if (mapping.device_resources.contains(resource)) {
        std::vector<std::string> ids = DeviceIds(resource, q);
        if (ids.empty()) continue;
        ::v1::ContainerDevices* d = out.add_devices();
        d->set_resource_name(resource);
        for (std::string& id : ids) d->add_device_ids(std::move(id));
        d->mutable_topology()->add_nodes()->set_id(static_cast<int64_t>(q.node()));
      }
    }
  }
  for (int cpu : cpus.Ids()) out.add_cpu_ids(cpu);
  return out;
}

}  // namespace qrm::podresources
