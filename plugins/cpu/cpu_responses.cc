#include "plugins/cpu/cpu_responses.h"

namespace qrm::cpu {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

pb::TopologyAwareQuantity PerNode(int node, int cpus) {
  pb::TopologyAwareQuantity q;
  q.set_resource_value(cpus);
  q.set_node(static_cast<uint64_t>(node));
  q.set_topology_level(pb::NUMA);
  return q;
}

}  // namespace

pb::TopologyHint ToProtoHint(NumaMask nodes, bool preferred) {
  pb::TopologyHint hint;
  for (int node : nodes.Nodes()) hint.add_nodes(static_cast<uint64_t>(node));
  hint.set_preferred(preferred);
  return hint;
}

pb::ResourceAllocationInfo AllocationInfo(const CpuLayout& layout, const CpuPools& pools,
                                          const ContainerAllocation& c) {
  const CpuSet cpus = ContainerCpus(layout, pools, c);
  pb::ResourceAllocationInfo info;
  info.set_oci_property_name(kOciCpusetCpus);
  // The kubelet reports CPU capacity itself; only extended resources are node resources.
  info.set_is_node_resource(false);
  info.set_is_scalar_resource(true);
  info.set_allocated_quantity(cpus.Size());
  // The level the container was admitted at (a pod role resolves to one): the container and
  // operators' tools (qrmctl) see it without knowing the role table.
  (*info.mutable_annotations())[kQosLevelAnnotation] = std::string(qos::QosLevelName(c.level));
  info.set_allocation_result(cpus.ToString());
  if (c.numa_bound()) *info.mutable_resource_hints()->add_hints() = ToProtoHint(c.numa_nodes, true);
  for (const auto& [node, node_cpus] : layout.node_cpus()) {
    const int n = node_cpus.Intersection(cpus).Size();
    if (n > 0) (*info.mutable_topology_assignments())[static_cast<uint64_t>(node)] = n;
  }
  return info;
}

void AddPerNode(const CpuLayout& layout, const CpuSet& cpus,
                google::protobuf::RepeatedPtrField<pb::TopologyAwareQuantity>* out) {
  for (int node : layout.cpu_nodes()) {
    const CpuSet on_node = layout.NodeCpus(node).Intersection(cpus);
    pb::TopologyAwareQuantity* q = out->Add();
    *q = PerNode(node, on_node.Size());
    // Which CPUs, not only how many: pod-resources' GetAllocatableResources lists cpu_ids, and
    // qrmctl tells reserved CPUs from allocatable ones by it.
    (*q->mutable_annotations())[kCpusAnnotation] = on_node.ToString();
  }
}

pb::TopologyAwareResource TopologyAwareCpus(const CpuLayout& layout, const CpuSet& cpus) {
  pb::TopologyAwareResource r;
  r.set_is_node_resource(false);
  r.set_is_scalar_resource(true);
  r.set_aggregated_quantity(cpus.Size());
  r.set_original_aggregated_quantity(cpus.Size());
  for (const auto& [node, node_cpus] : layout.node_cpus()) {
    const int n = node_cpus.Intersection(cpus).Size();
    if (n == 0) continue;
    *r.add_topology_aware_quantity_list() = PerNode(node, n);
    *r.add_original_topology_aware_quantity_list() = PerNode(node, n);
  }
  return r;
}

}  // namespace qrm::cpu
