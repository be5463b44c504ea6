#include "qrm/registry/plugin_answer_validation.h"

#include <cmath>

#include <fmt/format.h>

#include "common/quote.h"
#include "qrm/apply/env_annotation_rules.h"
#include "qrm/apply/oci_property.h"
#include "qrm/apply/property_value.h"

namespace qrm::registry {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

Status CheckQuantity(std::string_view where, double value) {
  if (std::isfinite(value) && value >= 0) return Status::Ok();
  return InvalidArgumentError(fmt::format("{} {}: must be finite and >= 0", where, value));
}

// NUMA node ids are uint64 on the wire; anything beyond the mask's range is as absent from
// the machine as an id the machine simply lacks.
Status CheckNode(std::string_view where, uint64_t node, const MachineLimits& limits) {
  if (node >= static_cast<uint64_t>(NumaMask::kMaxNodes)) {
    return InvalidArgumentError(fmt::format("{} names NUMA node {}: node ids are below {}", where,
                                            node, NumaMask::kMaxNodes));
  }
  if (limits.numa_nodes && !limits.numa_nodes->Has(static_cast<int>(node))) {
    return InvalidArgumentError(
        fmt::format("{} names NUMA node {}, which this machine does not have (nodes: {})", where,
                    node, limits.numa_nodes->ToString()));
  }
  return Status::Ok();
}

Status CheckHintList(std::string_view where, const pb::ListOfTopologyHints& list,
                     const MachineLimits& limits) {
  for (const pb::TopologyHint& hint : list.hints()) {
    if (hint.nodes().empty()) return InvalidArgumentError(fmt::format("{} has no nodes", where));
    for (uint64_t node : hint.nodes()) QRM_RETURN_IF_ERROR(CheckNode(where, node, limits));
  }
  return Status::Ok();
}

// The parsed cpuset (canonical "0-3,8") against the online CPUs or nodes.
Status CheckCpusetOnMachine(const std::string& resource, apply::OciProperty p,
                            const std::string& value, const std::string& canonical,
                            const MachineLimits& limits) {
  if (p == apply::OciProperty::kCpusetCpus && limits.online_cpus) {
    QRM_ASSIGN_OR_RETURN(auto set, CpuSet::Parse(canonical));
    CpuSet outside = set;
    for (int cpu : *limits.online_cpus) outside.Remove(cpu);
    if (!outside.Empty()) {
      return InvalidArgumentError(fmt::format(
          "resource {}: CpusetCpus value {}: CPUs {} are not online on this machine (online: {})",
          Quote(resource), Quote(value), outside.ToString(), limits.online_cpus->ToString()));
    }
  }
  if (p == apply::OciProperty::kCpusetMems && limits.numa_nodes) {
    QRM_ASSIGN_OR_RETURN(auto mask, NumaMask::Parse(canonical));
    if (!mask.IsSubsetOf(*limits.numa_nodes)) {
      return InvalidArgumentError(fmt::format(
          "resource {}: CpusetMems value {}: names NUMA nodes this machine does not have "
          "(nodes: {})",
          Quote(resource), Quote(value), limits.numa_nodes->ToString()));
    }
  }
  return Status::Ok();
}

Status CheckTopologyAwareQuantities(
    const std::string& resource, std::string_view field,
    const google::protobuf::RepeatedPtrField<pb::TopologyAwareQuantity>& list,
    const MachineLimits& limits) {
  const std::string where = fmt::format("resource {} {}", Quote(resource), field);
  for (const pb::TopologyAwareQuantity& q : list) {
    const std::string at = fmt::format("{} node {} resource_value", where, q.node());
    QRM_RETURN_IF_ERROR(CheckQuantity(at, q.resource_value()));
    // SOCKET-level entries number sockets, not NUMA nodes.
    if (q.topology_level() == pb::NUMA) {
      QRM_RETURN_IF_ERROR(CheckNode(where, q.node(), limits));
    }
    for (const auto& [key, value] : q.annotations()) {
      QRM_RETURN_IF_ERROR(apply::CheckAnnotation(resource, key, value));
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidateHintsAnswer(const google::protobuf::Map<std::string, pb::ListOfTopologyHints>& hints,
                           const MachineLimits& limits) {
  for (const auto& [resource, list] : hints) {
    QRM_RETURN_IF_ERROR(
        CheckHintList(fmt::format("resource_hints for {}: a hint", Quote(resource)), list, limits));
  }
  return Status::Ok();
}

Status ValidateAllocationInfo(const std::string& resource, const pb::ResourceAllocationInfo& info,
                              const MachineLimits& limits) {
  const std::string where = fmt::format("resource {}:", Quote(resource));
  QRM_RETURN_IF_ERROR(CheckQuantity(where + " allocated_quantity", info.allocated_quantity()));
  if (!info.oci_property_name().empty()) {
    StatusOr<apply::OciProperty> p = apply::ParseOciProperty(info.oci_property_name());
    if (!p.ok()) return p.status().WithContext(fmt::format("resource {}", Quote(resource)));
    ::runtime::v1::LinuxContainerResources field;
    QRM_RETURN_IF_ERROR(apply::ParsePropertyValue(resource, *p, info.allocation_result(), &field));
    if (*p == apply::OciProperty::kCpusetCpus || *p == apply::OciProperty::kCpusetMems) {
      QRM_RETURN_IF_ERROR(CheckCpusetOnMachine(
          resource, *p, info.allocation_result(),
          *p == apply::OciProperty::kCpusetCpus ? field.cpuset_cpus() : field.cpuset_mems(),
          limits));
    }
  }
  for (const auto& [key, value] : info.envs()) {
    QRM_RETURN_IF_ERROR(apply::CheckEnvVar(resource, key, value));
  }
  for (const auto& [key, value] : info.annotations()) {
    QRM_RETURN_IF_ERROR(apply::CheckAnnotation(resource, key, value));
  }
  QRM_RETURN_IF_ERROR(
      CheckHintList(where + " resource_hints: a hint", info.resource_hints(), limits));
  for (const auto& [node, amount] : info.topology_assignments()) {
    QRM_RETURN_IF_ERROR(CheckNode(where + " topology_assignments", node, limits));
  }
  return Status::Ok();
}

Status ValidateAllocateAnswer(const pb::ResourceAllocationResponse& answer,
                              const MachineLimits& limits) {
  for (const auto& [resource, info] : answer.allocation_result().resource_allocation()) {
    QRM_RETURN_IF_ERROR(ValidateAllocationInfo(resource, info, limits));
  }
  return Status::Ok();
}

Status ValidateResourcesAllocationAnswer(const pb::GetResourcesAllocationResponse& answer,
                                         const MachineLimits& limits) {
  for (const auto& [pod, containers] : answer.pod_resources()) {
    for (const auto& [container, allocation] : containers.container_resources()) {
      for (const auto& [resource, info] : allocation.resource_allocation()) {
        Status s = ValidateAllocationInfo(resource, info, limits);
        if (!s.ok()) {
          return s.WithContext(fmt::format("pod {} container {}", Quote(pod), Quote(container)));
        }
      }
    }
  }
  return Status::Ok();
}

Status ValidateTopologyAwareAnswer(const pb::GetTopologyAwareResourcesResponse& answer,
                                   const MachineLimits& limits) {
  for (const auto& [resource, r] :
       answer.container_topology_aware_resources().allocated_resources()) {
    const std::string where = fmt::format("resource {}", Quote(resource));
    QRM_RETURN_IF_ERROR(CheckQuantity(where + " aggregated_quantity", r.aggregated_quantity()));
    QRM_RETURN_IF_ERROR(
        CheckQuantity(where + " original_aggregated_quantity", r.original_aggregated_quantity()));
    QRM_RETURN_IF_ERROR(CheckTopologyAwareQuantities(resource, "topology_aware_quantity_list",
                                                     r.topology_aware_quantity_list(), limits));
    QRM_RETURN_IF_ERROR(
        CheckTopologyAwareQuantities(resource, "original_topology_aware_quantity_list",
                                     r.original_topology_aware_quantity_list(), limits));
  }
  return Status::Ok();
}

Status ValidateAllocatableAnswer(const pb::GetTopologyAwareAllocatableResourcesResponse& answer,
                                 const MachineLimits& limits) {
  for (const auto& [resource, r] : answer.allocatable_resources()) {
    const std::string where = fmt::format("resource {}", Quote(resource));
    QRM_RETURN_IF_ERROR(CheckQuantity(where + " aggregated_allocatable_quantity",
                                      r.aggregated_allocatable_quantity()));
    QRM_RETURN_IF_ERROR(
        CheckQuantity(where + " aggregated_capacity_quantity", r.aggregated_capacity_quantity()));
    QRM_RETURN_IF_ERROR(
        CheckTopologyAwareQuantities(resource, "topology_aware_allocatable_quantity_list",
                                     r.topology_aware_allocatable_quantity_list(), limits));
    QRM_RETURN_IF_ERROR(
        CheckTopologyAwareQuantities(resource, "topology_aware_capacity_quantity_list",
                                     r.topology_aware_capacity_quantity_list(), limits));
  }
  return Status::Ok();
}

}  // namespace qrm::registry
