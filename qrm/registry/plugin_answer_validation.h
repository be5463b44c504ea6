// Checks every answer a resource plugin sends, where the host receives it (PluginEndpoint),
// so that nothing invalid is stored in the host checkpoint, merged into a topology decision,
// reported to monitoring, or written into a CRI request.
//
// What is refused (kInvalidArgument naming the field and the value; PluginEndpoint adds
// "resource plugin <name> <Method>: " in front):
//  - quantities (allocated_quantity, aggregated/original/allocatable/capacity quantities,
//    resource_value) that are NaN, infinite or negative;
//  - topology hints without nodes or naming NUMA nodes the machine does not have, likewise
//    topology_assignments and NUMA-level TopologyAwareQuantity nodes;
//  - oci_property_name not in the known table, allocation_result the property cannot parse
//    (qrm/apply/property_value.h), cpusets naming CPUs / NUMA nodes that are not online here;
//  - envs and annotations the rules of qrm/apply/env_annotation_rules.h refuse.
// Machine ids are only checked when `limits` knows them (the real host always does).
#pragma once

#include <string>

#include "api/resourceplugin_v1alpha1.pb.h"
#include "common/status.h"
#include "qrm/registry/machine_limits.h"

namespace qrm::registry {

Status ValidateHintsAnswer(const google::protobuf::Map<
                               std::string, ::resourceplugin::v1alpha1::ListOfTopologyHints>& hints,
                           const MachineLimits& limits);

// One resource's allocation; errors start with `resource "<resource>": `.
Status ValidateAllocationInfo(const std::string& resource,
                              const ::resourceplugin::v1alpha1::ResourceAllocationInfo& info,
                              const MachineLimits& limits);

Status ValidateAllocateAnswer(const ::resourceplugin::v1alpha1::ResourceAllocationResponse& answer,
                              const MachineLimits& limits);
Status ValidateResourcesAllocationAnswer(
    const ::resourceplugin::v1alpha1::GetResourcesAllocationResponse& answer,
    const MachineLimits& limits);
Status ValidateTopologyAwareAnswer(
    const ::resourceplugin::v1alpha1::GetTopologyAwareResourcesResponse& answer,
    const MachineLimits& limits);
Status ValidateAllocatableAnswer(
    const ::resourceplugin::v1alpha1::GetTopologyAwareAllocatableResourcesResponse& answer,
    const MachineLimits& limits);

}  // namespace qrm::registry
