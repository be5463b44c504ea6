#include "plugins/memory/memory_plugin.h"

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/log.h"
#include "plugins/memory/memory_placement.h"
#include "plugins/sdk/responses.h"

namespace qrm::memory {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

constexpr const char* kComponent = "memory-plugin";
constexpr const char* kCpusetMems = "CpusetMems";

pb::TopologyHint ToProto(NumaMask nodes, bool preferred) {
  pb::TopologyHint hint;
  for (int node : nodes.Nodes()) hint.add_nodes(static_cast<uint64_t>(node));
  hint.set_preferred(preferred);
  return hint;
}

pb::TopologyAwareQuantity PerNode(int node, uint64_t bytes) {
  pb::TopologyAwareQuantity q;
  q.set_resource_value(static_cast<double>(bytes));
  q.set_node(static_cast<uint64_t>(node));
  q.set_topology_level(pb::NUMA);
  return q;
}

// The nodes of the host's merged hint; kInvalidArgument naming hint.nodes for a node this
// machine does not have.
StatusOr<NumaMask> HintNodes(const pb::TopologyHint& hint, NumaMask machine) {
  std::vector<int64_t> ids;
  for (uint64_t id : hint.nodes()) ids.push_back(id > 1000 ? 1000 : static_cast<int64_t>(id));
  StatusOr<NumaMask> mask = NumaMask::FromNodes(ids);
  if (!mask.ok()) return mask.status().WithContext("hint.nodes");
  if (!mask->IsSubsetOf(machine)) {
    return InvalidArgumentError(
        fmt::format("hint.nodes \"{}\": not all NUMA nodes of this machine (\"{}\")",
                    mask->ToString(), machine.ToString()));
  }
  return mask;
}

}  // namespace

pb::ResourceAllocationInfo AllocationInfo(const ContainerMemory& memory) {
  pb::ResourceAllocationInfo info;
  // Memory is a native kubelet resource: never published as a node resource by qrm.
  info.set_is_node_resource(false);
  info.set_is_scalar_resource(true);
  info.set_allocated_quantity(static_cast<double>(memory.bytes));
  if (memory.numa_bound()) {
    info.set_oci_property_name(kCpusetMems);
    info.set_allocation_result(memory.nodes.ToString());
    *info.mutable_resource_hints()->add_hints() = ToProto(memory.nodes, memory.hint_preferred);
    for (const auto& [node, bytes] : memory.bytes_by_node) {
      (*info.mutable_topology_assignments())[static_cast<uint64_t>(node)] = bytes;
    }
  }
  // Unbound: no cgroup field of ours to write (oci_property_name stays empty).
  return info;
}

StatusOr<std::unique_ptr<MemoryPlugin>> MemoryPlugin::Create(
    MemoryPluginConfig config, const machine::MachineTopology& machine) {
  const NumaMask machine_nodes = machine.NodeMask();
  for (const auto& [node, bytes] : config.reserved.per_node) {
    if (!machine_nodes.Has(node)) {
      return InvalidArgumentError(fmt::format(
          "reserved-memory: node {} ({} bytes) is not a NUMA node of this machine (nodes \"{}\")",
          node, bytes, machine_nodes.ToString()));
    }
  }
  std::vector<NodeMemory> nodes;
  uint64_t total = 0;
  for (const machine::NumaNodeInfo& n : machine.nodes) {
    const uint64_t reserved = config.reserved.For(n.id);
    if (reserved > n.memory_total_bytes) {
      return InvalidArgumentError(
          fmt::format("reserved-memory: node {} reserves {} bytes, more than its {} bytes", n.id,
                      reserved, n.memory_total_bytes));
    }
    nodes.push_back({n.id, n.memory_total_bytes, reserved});
    total += n.memory_total_bytes;
  }
  if (nodes.empty()) return FailedPreconditionError("the machine reports no NUMA node");
  const uint64_t max_request = total > std::numeric_limits<uint64_t>::max() / 1024
                                   ? std::numeric_limits<uint64_t>::max()
                                   : total * 1024;

  std::unique_ptr<MemoryPlugin> plugin(
      new MemoryPlugin(std::move(config), MemoryState(std::move(nodes)), max_request));
  MutexLock lock(plugin->mu_);
  sdk::LedgerOptions ledger;  // what the plugin's configuration decides; the rest is the ledger's
  ledger.path = plugin->config_.StatePath();
  ledger.reset_state = plugin->config_.reset_state;
  ledger.snapshot_write = plugin->config_.write_options;
  ledger.journal_write = plugin->config_.journal_options;
  // Opening writes a snapshot at once: a read-only state directory stops the plugin now, not
  // at the first Allocate.
  QRM_ASSIGN_OR_RETURN(plugin->ledger_,
                       OpenMemoryLedger(ledger, &plugin->state_, &plugin->state_file_));
  return plugin;
}

MemoryPlugin::MemoryPlugin(MemoryPluginConfig config, MemoryState state, uint64_t max_request_bytes)
    : config_(std::move(config)),
      max_request_bytes_(max_request_bytes),
      nodes_(state.nodes()),
      state_(std::move(state)) {}

pb::ResourcePluginOptions MemoryPlugin::Options() const {
  pb::ResourcePluginOptions options;
  options.set_with_topology_alignment(true);  // NUMA-bound containers get real hints
  // The host reconciles cpuset.mems against GetResourcesAllocation (e.g. after its own
  // checkpoint was lost).
  options.set_need_reconcile(true);
  options.set_pre_start_required(false);
  return options;
}

MemoryState MemoryPlugin::Snapshot() const {
  MutexLock lock(mu_);
  return state_;
}

StatusOr<uint64_t> MemoryPlugin::RequestedBytes(const pb::ResourceRequest& req) const {
  if (!req.resource_requests().contains(kResourceName)) return uint64_t{0};
  StatusOr<double> q =
      qos::RequestedQuantity(req, kResourceName, static_cast<double>(max_request_bytes_));
  if (!q.ok()) return q.status();
  // Kubernetes rounds fractional byte quantities ("100m") up; so do we.
  return static_cast<uint64_t>(std::ceil(*q));
}

StatusOr<NumaMask> MemoryPlugin::ChooseNodes(const pb::ResourceRequest& req,
                                             const ContainerMemory& memory, bool* preferred) const {
  if (req.hint().nodes_size() > 0) {
    *preferred = req.hint().preferred();
    return HintNodes(req.hint(), state_.NodeMask());
  }
  // No affinity from the host (e.g. topology policy "none"): our own best hint.
  const PlacementSubject who{req.pod_uid(), memory.role, memory.numa_exclusive};
  const std::vector<MemoryHint> hints =
      BoundHints(state_, AllowedNodes(state_, config_.roles, who), memory.bytes);
  if (hints.empty()) {
    return ResourceExhaustedError(
        fmt::format("no allowed NUMA node set has {} bytes free", memory.bytes));
  }
  *preferred = hints.front().preferred;
  return hints.front().nodes;
}

StatusOr<pb::ResourceHintsResponse> MemoryPlugin::GetTopologyHints(const pb::ResourceRequest& req) {
  auto qos = qos::ResolveQos(req, config_.roles);
  if (!qos.ok()) return qos.status().WithContext(fmt::format("{}", sdk::RefOf(req)));
  auto bytes = RequestedBytes(req);
  if (!bytes.ok()) return bytes.status().WithContext(fmt::format("{}", sdk::RefOf(req)));
  pb::ResourceHintsResponse resp;
  sdk::EchoIdentity(req, kResourceName, &resp);
  // Not NUMA-bound: no preference (an absent entry; an empty list would mean "cannot be
  // satisfied"), answered without waiting for the lock that durable writes hold.
  if (!qos->numa_bound()) return resp;

  MutexLock lock(mu_);
  // Asked again for a container we already serve: where it is, so the host's affinity agrees
  // with what Allocate returns.
  if (const ContainerMemory* held = state_.Find(req.pod_uid(), req.container_name())) {
    if (held->numa_bound()) {
      *(*resp.mutable_resource_hints())[kResourceName].add_hints() = ToProto(held->nodes, true);
    }
    return resp;
  }
  if (*bytes == 0) return resp;  // nothing to place: no preference

  const PlacementSubject who{req.pod_uid(), qos->role, qos->numa_exclusive};
  auto& list = (*resp.mutable_resource_hints())[kResourceName];
  for (const MemoryHint& hint :
       BoundHints(state_, AllowedNodes(state_, config_.roles, who), *bytes)) {
    *list.add_hints() = ToProto(hint.nodes, hint.preferred);
  }
  if (list.hints_size() == 0) {
    Logger(kComponent)
        ->info("{}: {} bytes of NUMA-bound memory fit on no allowed node set", sdk::RefOf(req),
               *bytes);
  }
  return resp;
}

StatusOr<pb::ResourceAllocationResponse> MemoryPlugin::Allocate(const pb::ResourceRequest& req) {
  const PodRef ref = sdk::RefOf(req);
  auto qos = qos::ResolveQos(req, config_.roles);
  if (!qos.ok()) return qos.status().WithContext(fmt::format("{}", ref));
  auto bytes = RequestedBytes(req);
  if (!bytes.ok()) return bytes.status().WithContext(fmt::format("{}", ref));
  pb::ResourceAllocationResponse resp;
  sdk::EchoIdentity(req, kResourceName, &resp);
  auto& allocations = *resp.mutable_allocation_result()->mutable_resource_allocation();

  MutexLock lock(mu_);
  // Idempotent: the host may replay Allocate (rollback of another plugin, its own restart).
  if (const ContainerMemory* held = state_.Find(req.pod_uid(), req.container_name())) {
    allocations[kResourceName] = AllocationInfo(*held);
    return resp;
  }

  ContainerMemory memory;
  memory.bytes = *bytes;
  memory.role = qos->role;
  memory.numa_exclusive = qos->numa_exclusive;
  if (qos->numa_bound()) {
    // Even 0 bytes get cpuset.mems when the host chose nodes: CPUs and memory stay together.
    if (*bytes == 0 && req.hint().nodes_size() == 0) return resp;
    bool preferred = false;
    auto nodes = ChooseNodes(req, memory, &preferred);
    if (!nodes.ok()) return nodes.status().WithContext(fmt::format("{}", ref));
    const PlacementSubject who{req.pod_uid(), memory.role, memory.numa_exclusive};
    if (Status allowed = CheckPlacement(state_, config_.roles, who, *nodes); !allowed.ok()) {
      return allowed.WithContext(fmt::format("{}: NUMA nodes \"{}\"", ref, nodes->ToString()));
    }
    auto split = SplitOverNodes(state_, *nodes, *bytes);
    if (!split.ok()) return split.status().WithContext(fmt::format("{}", ref));
    memory.nodes = *nodes;
    memory.bytes_by_node = std::move(*split);
    memory.hint_preferred = preferred;
  } else if (*bytes == 0) {
    return resp;  // nothing to hold, nothing to record
  }

  QRM_RETURN_IF_ERROR(
      state_.Add(req.pod_uid(), req.pod_name(), req.pod_namespace(), req.container_name(), memory));
  const MemoryEntry entry{req.pod_name(), req.pod_namespace(), memory};
  if (Status saved = ledger_->Put(req.pod_uid(), req.container_name(), entry); !saved.ok()) {
    // Undo, so memory matches the file; the host rolls the admission back.
    state_.RemoveContainer(req.pod_uid(), req.container_name());
    return saved.WithContext(fmt::format("{}: persisting the allocation", ref));
  }
  if (memory.numa_bound()) {
    Logger(kComponent)
        ->info("{}: {} bytes on NUMA nodes {} (free now {} bytes there)", ref, memory.bytes,
               memory.nodes.ToString(), state_.FreeOn(memory.nodes));
  } else {
    Logger(kComponent)->info("{}: {} bytes, not NUMA-bound", ref, memory.bytes);
  }
  allocations[kResourceName] = AllocationInfo(memory);
  return resp;
}

Status MemoryPlugin::RemovePod(const std::string& pod_uid) {
  MutexLock lock(mu_);
  std::optional<PodMemory> removed = state_.RemovePod(pod_uid);
  // Unknown pods succeed: the host removes every pod from every plugin, and retries.
  if (!removed) return Status::Ok();
  if (Status saved = ledger_->RemovePod(pod_uid); !saved.ok()) {
    // Keep holding it: the host keeps the pod and calls again.
    state_.RestorePod(pod_uid, std::move(*removed));
    return saved.WithContext(fmt::format("pod {}: persisting the release", pod_uid));
  }
  Logger(kComponent)
      ->info("{}: released {} container(s)", PodRef{pod_uid, removed->ns, removed->name, ""},
             removed->containers.size());
  return Status::Ok();
}

StatusOr<pb::GetResourcesAllocationResponse> MemoryPlugin::GetResourcesAllocation() {
  pb::GetResourcesAllocationResponse resp;
  MutexLock lock(mu_);
  for (const auto& [uid, pod] : state_.pods()) {
    auto& containers = *(*resp.mutable_pod_resources())[uid].mutable_container_resources();
    for (const auto& [name, memory] : pod.containers) {
      (*containers[name].mutable_resource_allocation())[kResourceName] = AllocationInfo(memory);
    }
  }
  return resp;
}

StatusOr<pb::GetTopologyAwareResourcesResponse> MemoryPlugin::GetTopologyAwareResources(
    const pb::GetTopologyAwareResourcesRequest& req) {
  MutexLock lock(mu_);
  const ContainerMemory* memory = state_.Find(req.pod_uid(), req.container_name());
  if (memory == nullptr) {
    return NotFoundError(fmt::format("pod uid \"{}\" container \"{}\": holds no memory",
                                     req.pod_uid(), req.container_name()));
  }
  const PodMemory& pod = *state_.Pod(req.pod_uid());
  pb::GetTopologyAwareResourcesResponse resp;
  resp.set_pod_uid(req.pod_uid());
  resp.set_pod_name(pod.name);
  resp.set_pod_namespace(pod.ns);
  auto* container = resp.mutable_container_topology_aware_resources();
  container->set_container_name(req.container_name());
  pb::TopologyAwareResource& r = (*container->mutable_allocated_resources())[kResourceName];
  r.set_is_node_resource(false);
  r.set_is_scalar_resource(true);
  r.set_aggregated_quantity(static_cast<double>(memory->bytes));
  r.set_original_aggregated_quantity(static_cast<double>(memory->bytes));
  for (const auto& [node, bytes] : memory->bytes_by_node) {
    *r.add_topology_aware_quantity_list() = PerNode(node, bytes);
    *r.add_original_topology_aware_quantity_list() = PerNode(node, bytes);
  }
  return resp;
}

StatusOr<pb::GetTopologyAwareAllocatableResourcesResponse>
MemoryPlugin::GetTopologyAwareAllocatableResources() {
  pb::GetTopologyAwareAllocatableResourcesResponse resp;
  pb::AllocatableTopologyAwareResource& r = (*resp.mutable_allocatable_resources())[kResourceName];
  r.set_is_node_resource(false);
  r.set_is_scalar_resource(true);
  // Both are fixed for the plugin's life: capacity is what the nodes have, allocatable what
  // is left after the system reservation.
  uint64_t allocatable = 0, capacity = 0;
  for (const NodeMemory& node : nodes_) {
    *r.add_topology_aware_allocatable_quantity_list() = PerNode(node.id, node.allocatable_bytes());
    *r.add_topology_aware_capacity_quantity_list() = PerNode(node.id, node.total_bytes);
    allocatable += node.allocatable_bytes();
    capacity += node.total_bytes;
  }
  r.set_aggregated_allocatable_quantity(static_cast<double>(allocatable));
  r.set_aggregated_capacity_quantity(static_cast<double>(capacity));
  return resp;
}

Status MemoryPlugin::WriteSnapshot() {
  MutexLock lock(mu_);
  return ledger_->WriteSnapshot();
}

}  // namespace qrm::memory
