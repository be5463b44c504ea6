// Conversion of qrm's allocations to the kubelet's podresources v1 messages.
//
// List/Get answer from the host checkpoint (what admission and reconcile recorded, which is
// what the runtime was told), so tools see exactly the cpusets the containers run with:
//   * the CPU resource's CpusetCpus result -> ContainerResources.cpu_ids (a shared container
//     reports the pool it is in now, because reconcile keeps the checkpoint current);
//   * the memory resource -> one ContainerMemory{memory_type "memory", size = allocated bytes,
//     topology = the NUMA nodes the bytes come from}: the hint's nodes, else the nodes of
//     topology_assignments, else a CpusetMems result; memory bound to no node (shared
//     containers) may come from any node, so its block names every node of the machine.
//     The kubelet never reports a block without topology, and consumers (NFD's topology
//     updater) drop such blocks from their per-NUMA accounting;
//   * device resources (NICs) -> ContainerDevices{resource_name, device_ids = the allocation
//     result split at ',', topology = the hint's nodes}.
// PodResources.cpu_ids / memory (pod-level exclusive allocations upstream) stay empty: qrm
// allocates per container, like the kubelet for pods without pod-level resources.
// GetAllocatableResources answers from the plugins' allocatable reports:
//   * CPU: per-NUMA quantities carrying the annotation `qrm.io/cpus` (the node's allocatable
//     cpuset) -> cpu_ids;
//   * memory: per-NUMA quantities -> ContainerMemory per node;
//   * devices: one ContainerDevices per quantity with one device id per unit, as the kubelet
//     lists one id per device. A quantity of one unit named after a device (the NIC plugin:
//     name = interface) is that id; a countable quantity (resource_value N, unnamed or named
//     after the resource itself) becomes N ids "<name or resource>-numa<node>-<k>", k < N
//     (at most kMaxDeviceUnits per quantity).
#pragma once

#include <map>
#include <set>
#include <string>

#include "api/podresources_v1.pb.h"
#include "api/resourceplugin_v1alpha1.pb.h"
#include "common/numa_mask.h"
#include "common/protocol_keys.h"
#include "qrm/state/pod_resources.h"

namespace qrm::podresources {

// Bound on the ids synthesized for one countable quantity (a hostile or broken report of
// 1e18 units must not exhaust memory).
inline constexpr int64_t kMaxDeviceUnits = 4096;

struct PodResourcesMapping {
  std::string cpu_resource = "cpu";
  std::string memory_resource = "memory";
  // Resources reported as devices (e.g. "qrm.io/nic").
  std::set<std::string> device_resources = {kNicResourceName};
  // The machine's NUMA nodes: the topology of memory bound to no node. Empty: unknown (such
  // blocks then carry no topology).
  NumaMask machine_nodes;
};

::v1::PodResources ToPodResources(const state::PodAllocation& pod,
                                  const PodResourcesMapping& mapping);

::v1::AllocatableResourcesResponse ToAllocatable(
    const std::map<std::string, ::resourceplugin::v1alpha1::AllocatableTopologyAwareResource>&
        allocatable,
    const PodResourcesMapping& mapping);

}  // namespace qrm::podresources
