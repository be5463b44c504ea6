// Building the protocol's answers from CPU sets (no decisions here).
#pragma once

#include <string>

#include "api/resourceplugin_v1alpha1.pb.h"
#include "common/cpu_set.h"
#include "common/numa_mask.h"
#include "plugins/cpu/cpu_layout.h"
#include "plugins/cpu/cpu_plugin_config.h"
#include "plugins/cpu/cpu_state.h"

namespace qrm::cpu {

namespace pb = ::resourceplugin::v1alpha1;

inline constexpr const char* kOciCpusetCpus = "CpusetCpus";

pb::TopologyHint ToProtoHint(NumaMask nodes, bool preferred);

// A container's allocation as the host stores and applies it: oci_property_name CpusetCpus,
// scalar, allocated_quantity = the CPUs in its cpuset, topology_assignments per NUMA node and,
// for NUMA-bound containers, its nodes as the (preferred) resource hint.
pb::ResourceAllocationInfo AllocationInfo(const CpuLayout& layout, const ContainerAllocation& c);

// Per-NUMA CPU counts of `cpus` (nodes it does not touch are left out).
pb::TopologyAwareResource TopologyAwareCpus(const CpuLayout& layout, const CpuSet& cpus);

// Container annotation with the QoS level the container was admitted at ("dedicated_cores").
inline constexpr const char* kQosLevelAnnotation = "qrm.io/qos-level";

// Annotation on per-NUMA quantities naming the CPUs counted ("2-39").
inline constexpr const char* kCpusAnnotation = "qrm.io/cpus";

// Annotation on per-NUMA allocatable quantities naming the node's reclaimed-pool CPUs.
inline constexpr const char* kReclaimedCpusAnnotation = "qrm.io/reclaimed-cpus";

// One TopologyAwareQuantity per NUMA node with CPUs: how many of `cpus` are on it, and which.
void AddPerNode(const CpuLayout& layout, const CpuSet& cpus,
                google::protobuf::RepeatedPtrField<pb::TopologyAwareQuantity>* out);

// The request fields that identify the container, echoed into a response.
template <typename Response>
void EchoIdentity(const pb::ResourceRequest& req, Response* resp) {
  resp->set_pod_uid(req.pod_uid());
  resp->set_pod_namespace(req.pod_namespace());
  resp->set_pod_name(req.pod_name());
  resp->set_container_name(req.container_name());
  resp->set_container_type(req.container_type());
  resp->set_container_index(req.container_index());
  resp->set_pod_role(req.pod_role());
  resp->set_pod_type(req.pod_type());
  resp->set_resource_name(kResourceName);
  resp->set_native_qos_class(req.native_qos_class());
}

}  // namespace qrm::cpu
