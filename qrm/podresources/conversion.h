// Conversion of qrm's allocations to the kubelet's podresources v1 messages.
//
// List/Get answer from the host checkpoint (what admission and reconcile recorded, which is
// what the runtime was told), so tools see exactly the cpusets the containers run with:
//   * the CPU resource's CpusetCpus result -> ContainerResources.cpu_ids (a shared container
//     reports the pool it is in now, because reconcile keeps the checkpoint current);
//   * the memory resource -> one ContainerMemory{memory_type "memory", size = allocated bytes,
//     topology = the NUMA nodes of its hint};
//   * device resources (NICs) -> ContainerDevices{resource_name, device_ids = the allocation
//     result split at ',', topology = the hint's nodes}.
// GetAllocatableResources answers from the plugins' allocatable reports:
//   * CPU: per-NUMA quantities carrying the annotation `qrm.io/cpus` (the node's allocatable
//     cpuset) -> cpu_ids;
//   * memory: per-NUMA quantities -> ContainerMemory per node;
//   * devices: named quantities (name = device id, node = NUMA node) -> ContainerDevices.
#pragma once

#include <map>
#include <set>
#include <string>

#include "api/podresources_v1.pb.h"
#include "api/resourceplugin_v1alpha1.pb.h"
#include "qrm/state/pod_resources.h"

namespace qrm::host {

inline constexpr const char* kAllocatableCpusAnnotation = "qrm.io/cpus";

struct PodResourcesMapping {
  std::string cpu_resource = "cpu";
  std::string memory_resource = "memory";
  // Resources reported as devices (e.g. "qrm.io/nic").
  std::set<std::string> device_resources = {"qrm.io/nic"};
};

::v1::PodResources ToPodResources(const PodAllocation& pod, const PodResourcesMapping& mapping);

::v1::AllocatableResourcesResponse ToAllocatable(
    const std::map<std::string, ::resourceplugin::v1alpha1::AllocatableTopologyAwareResource>&
        allocatable,
    const PodResourcesMapping& mapping);

}  // namespace qrm::host
