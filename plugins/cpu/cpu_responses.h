// Building the protocol's answers from CPU sets (no decisions here).
#pragma once

#include <string>

#include "api/resourceplugin_v1alpha1.pb.h"
#include "common/cpu_set.h"
#include "common/numa_mask.h"
#include "common/protocol_keys.h"
#include "plugins/cpu/cpu_layout.h"
#include "plugins/cpu/cpu_plugin_config.h"
#include "plugins/cpu/cpu_state.h"

namespace qrm::cpu {

inline constexpr const char* kOciCpusetCpus = "CpusetCpus";

::resourceplugin::v1alpha1::TopologyHint ToProtoHint(NumaMask nodes, bool preferred);

// A container's allocation as the host stores and applies it: oci_property_name CpusetCpus,
// scalar, allocated_quantity = the CPUs it runs on under `pools` (ContainerCpus),
// topology_assignments per NUMA node and, for NUMA-bound containers, its nodes as the
// (preferred) resource hint.
::resourceplugin::v1alpha1::ResourceAllocationInfo AllocationInfo(const CpuLayout& layout,
                                                                  const CpuPools& pools,
                                                                  const ContainerAllocation& c);

// Per-NUMA CPU counts of `cpus` (nodes it does not touch are left out).
::resourceplugin::v1alpha1::TopologyAwareResource TopologyAwareCpus(const CpuLayout& layout,
                                                                    const CpuSet& cpus);

// One TopologyAwareQuantity per NUMA node with CPUs: how many of `cpus` are on it, and which.
void AddPerNode(
    const CpuLayout& layout, const CpuSet& cpus,
    google::protobuf::RepeatedPtrField<::resourceplugin::v1alpha1::TopologyAwareQuantity>* out);

}  // namespace qrm::cpu
