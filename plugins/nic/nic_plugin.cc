#include "plugins/nic/nic_plugin.h"

#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/log.h"
#include "common/protocol_keys.h"
#include "plugins/nic/nic_selection.h"
#include "plugins/sdk/responses.h"

namespace qrm::nic {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

constexpr const char* kComponent = "nic-plugin";
constexpr const char* kDeviceType = "NIC";

pb::TopologyHint SingleNodeHint(int node, bool preferred) {
  pb::TopologyHint hint;
  hint.add_nodes(static_cast<uint64_t>(node));
  hint.set_preferred(preferred);
  return hint;
}

pb::TopologyAwareQuantity Quantity(double value, int node, const std::string& name) {
  pb::TopologyAwareQuantity q;
  q.set_resource_value(value);
  q.set_node(static_cast<uint64_t>(node));
  q.set_name(name);
  q.set_type(kDeviceType);
  q.set_topology_level(pb::NUMA);
  return q;
}

// A whole, non-negative quantity of `resource` up to `max`; 0 when the request names none.
StatusOr<int64_t> WholeQuantity(const pb::ResourceRequest& req, const std::string& resource,
                                double max) {
  if (resource.empty() || !req.resource_requests().contains(resource)) return int64_t{0};
  StatusOr<double> q = qos::RequestedQuantity(req, resource, max);
  if (!q.ok()) return q.status();
  if (*q != std::floor(*q)) {
    return InvalidArgumentError(fmt::format(
        "resource_requests[\"{}\"]: invalid quantity {} (expected a whole number)", resource, *q));
  }
  return static_cast<int64_t>(*q);
}

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

std::string FreeSummary(const NicState& state) {
  std::string out;
  for (const Nic& nic : state.nics()) {
    out +=
        fmt::format("{}{}(node {}, {}, {} Mb/s free)", out.empty() ? "" : " ", nic.key.ToString(),
                    nic.numa_node, nic.up ? "up" : "down", state.FreeMbps(nic));
  }
  return out.empty() ? "no NICs" : out;
}

}  // namespace

StatusOr<std::unique_ptr<NicPlugin>> NicPlugin::Create(NicPluginConfig config,
                                                       const machine::MachineTopology& machine) {
  QRM_RETURN_IF_ERROR(config.Validate());
  auto log = Logger(kComponent);
  std::vector<std::string> warnings;
  std::vector<Nic> nics = BuildInventory(machine, config, &warnings);
  for (const std::string& w : warnings) log->warn("{}", w);
  for (const Nic& nic : nics) {
    log->info("serving NIC {}: node {}, {} Mb/s ({} Mb/s allocatable), {}{}{}", nic.key.ToString(),
              nic.numa_node, nic.speed_mbps, nic.capacity_mbps, nic.up ? "up" : "down",
              nic.ipv4.empty() ? "" : ", " + nic.ipv4, nic.ipv6.empty() ? "" : ", " + nic.ipv6);
  }
  if (nics.empty()) log->warn("no NIC to serve: every container that asks for one is refused");

  std::unique_ptr<NicPlugin> plugin(
      new NicPlugin(std::move(config), NicState(std::move(nics)), machine.NodeMask()));
  MutexLock lock(plugin->mu_);
  sdk::LedgerOptions ledger;  // what the plugin's configuration decides; the rest is the ledger's
  ledger.path = plugin->config_.StatePath();
  ledger.reset_state = plugin->config_.reset_state;
  ledger.snapshot_write = plugin->config_.write_options;
  ledger.journal_write = plugin->config_.journal_options;
  // Opening writes a snapshot at once: a read-only state directory stops the plugin now.
  QRM_ASSIGN_OR_RETURN(plugin->ledger_,
                       OpenNicLedger(ledger, &plugin->state_, &plugin->state_file_));
  return plugin;
}

NicPlugin::NicPlugin(NicPluginConfig config, NicState state, NumaMask machine_nodes)
    : config_(std::move(config)),
      machine_nodes_(machine_nodes),
      nics_(state.nics()),
      state_(std::move(state)) {}

pb::ResourcePluginOptions NicPlugin::Options() const {
  pb::ResourcePluginOptions options;
  options.set_with_topology_alignment(true);
  // Nothing of ours changes on a running container, but a NIC that disappeared is reported
  // through GetResourcesAllocation.
  options.set_need_reconcile(true);
  options.set_pre_start_required(false);
  return options;
}

NicState NicPlugin::Snapshot() const {
  MutexLock lock(mu_);
  return state_;
}

StatusOr<NicPlugin::Need> NicPlugin::NeedOf(const pb::ResourceRequest& req) const {
  QRM_ASSIGN_OR_RETURN(auto qos, qos::ResolveQos(req, config_.roles));
  StatusOr<int64_t> nics = WholeQuantity(req, config_.resource_name, 1);
  if (!nics.ok()) return nics.status();
  StatusOr<int64_t> mbps = WholeQuantity(req, config_.bandwidth_resource_name, kMaxBandwidthMbps);
  if (!mbps.ok()) return mbps.status();
  Need need;
  need.mbps = *mbps;
  need.required = *nics > 0 || *mbps > 0;
  need.wanted = need.required || qos.numa_bound();
  return need;
}

pb::ResourceAllocationInfo NicPlugin::AllocationInfo(const NicAssignment& a) const {
  pb::ResourceAllocationInfo info;
  info.set_is_node_resource(false);
  if (a.bandwidth_mbps > 0) {
    info.set_is_scalar_resource(true);
    info.set_allocated_quantity(static_cast<double>(a.bandwidth_mbps));
  }
  // allocation_result is informational (no oci property): which NIC, and whether it is gone.
  info.set_allocation_result(state_.Find(a.nic) ? a.nic.ToString()
                                                : a.nic.ToString() + " (missing)");
  auto& envs = *info.mutable_envs();
  envs[kEnvNicName] = a.nic.name;
  if (!a.ipv4.empty()) envs[kEnvNicIpv4] = a.ipv4;
  if (!a.ipv6.empty()) envs[kEnvNicIpv6] = a.ipv6;
  if (!a.netns_path.empty()) (*info.mutable_annotations())[kNetnsAnnotation] = a.netns_path;
  if (a.numa_node >= 0) {
    *info.mutable_resource_hints()->add_hints() = SingleNodeHint(a.numa_node, a.hint_preferred);
  }
  return info;
}

StatusOr<pb::ResourceHintsResponse> NicPlugin::GetTopologyHints(const pb::ResourceRequest& req) {
  auto need = NeedOf(req);
  if (!need.ok()) return need.status().WithContext(fmt::format("{}", sdk::RefOf(req)));
  pb::ResourceHintsResponse resp;
  sdk::EchoIdentity(req, config_.resource_name, &resp);
  if (!need->wanted) return resp;  // no preference; the common case, answered without a lock

  MutexLock lock(mu_);
  if (const NicAssignment* held = state_.FindAssignment(req.pod_uid(), req.container_name())) {
    if (held->numa_node >= 0) {
      *(*resp.mutable_resource_hints())[config_.resource_name].add_hints() =
          SingleNodeHint(held->numa_node, true);
    }
    return resp;
  }
  const std::optional<std::vector<NumaMask>> hints = NicHints(state_, need->mbps);
  if (!hints) return resp;                             // no NIC with a known node fits
  if (hints->empty() && !need->required) return resp;  // implicit: never a reason to reject
  auto& list = (*resp.mutable_resource_hints())[config_.resource_name];
  for (NumaMask nodes : *hints) *list.add_hints() = SingleNodeHint(nodes.Nodes().front(), true);
  return resp;
}

StatusOr<pb::ResourceAllocationResponse> NicPlugin::Allocate(const pb::ResourceRequest& req) {
  const PodRef ref = sdk::RefOf(req);
  auto need = NeedOf(req);
  if (!need.ok()) return need.status().WithContext(fmt::format("{}", ref));
  pb::ResourceAllocationResponse resp;
  sdk::EchoIdentity(req, config_.resource_name, &resp);
  // Nothing asked: nothing to hold. (A replayed Allocate carries the same request, so a
  // container that holds a NIC always wants one.)
  if (!need->wanted) return resp;
  auto hint = HintNodes(req.hint(), machine_nodes_);
  if (!hint.ok()) return hint.status().WithContext(fmt::format("{}", ref));
  auto& allocations = *resp.mutable_allocation_result()->mutable_resource_allocation();

  MutexLock lock(mu_);
  if (const NicAssignment* held = state_.FindAssignment(req.pod_uid(), req.container_name())) {
    allocations[config_.resource_name] = AllocationInfo(*held);
    return resp;
  }

  // A replay after we lost our state: the NIC the container had, if it can still take it.
  const Nic* nic = nullptr;
  if (auto it = req.annotations().find(kPreviousAllocationAnnotation);
      it != req.annotations().end()) {
    for (const Nic* candidate : Candidates(state_, need->mbps)) {
      if (candidate->key.ToString() == it->second) nic = candidate;
    }
  }
  if (nic == nullptr) nic = PickNic(state_, *hint, need->mbps);
  if (nic == nullptr) {
    const std::string where = hint->empty() ? "any NUMA node" : "NUMA nodes " + hint->ToString();
    if (!need->required) {
      Logger(kComponent)->info("{}: no NIC on {} for this NUMA-bound container", ref, where);
      return resp;
    }
    return ResourceExhaustedError(fmt::format("{}: no up NIC with {} Mb/s free on {} ({})", ref,
                                              need->mbps, where, FreeSummary(state_)));
  }
  NicAssignment a;
  a.nic = nic->key;
  a.netns_path = nic->netns_path;
  a.numa_node = nic->numa_node;
  a.bandwidth_mbps = need->mbps;
  a.ipv4 = nic->ipv4;
  a.ipv6 = nic->ipv6;
  a.hint_preferred = hint->empty() || req.hint().preferred();
  QRM_RETURN_IF_ERROR(
      state_.Add(req.pod_uid(), req.pod_name(), req.pod_namespace(), req.container_name(), a));
  const NicEntry entry{req.pod_name(), req.pod_namespace(), a};
  if (Status saved = ledger_->Put(req.pod_uid(), req.container_name(), entry); !saved.ok()) {
    state_.RemoveContainer(req.pod_uid(), req.container_name());
    return saved.WithContext(fmt::format("{}: persisting the allocation", ref));
  }
  Logger(kComponent)
      ->info("{}: NIC {} (node {}), {} Mb/s; {} Mb/s free on it", ref, a.nic.ToString(),
             a.numa_node, a.bandwidth_mbps, state_.FreeMbps(*nic));
  allocations[config_.resource_name] = AllocationInfo(a);
  return resp;
}

Status NicPlugin::RemovePod(const std::string& pod_uid) {
  MutexLock lock(mu_);
  std::optional<PodNics> removed = state_.RemovePod(pod_uid);
  if (!removed) return Status::Ok();  // unknown pods succeed: the host retries removals
  if (Status saved = ledger_->RemovePod(pod_uid); !saved.ok()) {
    state_.RestorePod(pod_uid, std::move(*removed));
    return saved.WithContext(fmt::format("pod {}: persisting the release", pod_uid));
  }
  Logger(kComponent)
      ->info("{}: released {} container(s)", PodRef{pod_uid, removed->ns, removed->name, ""},
             removed->containers.size());
  return Status::Ok();
}

StatusOr<pb::GetResourcesAllocationResponse> NicPlugin::GetResourcesAllocation() {
  pb::GetResourcesAllocationResponse resp;
  MutexLock lock(mu_);
  for (const auto& [uid, pod] : state_.pods()) {
    auto& containers = *(*resp.mutable_pod_resources())[uid].mutable_container_resources();
    for (const auto& [name, a] : pod.containers) {
      (*containers[name].mutable_resource_allocation())[config_.resource_name] = AllocationInfo(a);
    }
  }
  return resp;
}

StatusOr<pb::GetTopologyAwareResourcesResponse> NicPlugin::GetTopologyAwareResources(
    const pb::GetTopologyAwareResourcesRequest& req) {
  MutexLock lock(mu_);
  const NicAssignment* a = state_.FindAssignment(req.pod_uid(), req.container_name());
  if (a == nullptr) {
    return NotFoundError(fmt::format("pod uid \"{}\" container \"{}\": holds no NIC", req.pod_uid(),
                                     req.container_name()));
  }
  const PodNics& pod = *state_.Pod(req.pod_uid());
  pb::GetTopologyAwareResourcesResponse resp;
  resp.set_pod_uid(req.pod_uid());
  resp.set_pod_name(pod.name);
  resp.set_pod_namespace(pod.ns);
  auto* container = resp.mutable_container_topology_aware_resources();
  container->set_container_name(req.container_name());
  auto& resources = *container->mutable_allocated_resources();
  const std::string name = a->nic.ToString();

  pb::TopologyAwareResource& device = resources[config_.resource_name];
  device.set_aggregated_quantity(1);
  device.set_original_aggregated_quantity(1);
  // A NIC on no known node has no per-node entry (a node id of 0 would be a lie).
  if (a->numa_node >= 0) {
    *device.add_topology_aware_quantity_list() = Quantity(1, a->numa_node, name);
    *device.add_original_topology_aware_quantity_list() = Quantity(1, a->numa_node, name);
  }
  if (a->bandwidth_mbps > 0 && !config_.bandwidth_resource_name.empty()) {
    pb::TopologyAwareResource& bw = resources[config_.bandwidth_resource_name];
    const double mbps = static_cast<double>(a->bandwidth_mbps);
    bw.set_is_scalar_resource(true);
    bw.set_aggregated_quantity(mbps);
    bw.set_original_aggregated_quantity(mbps);
    if (a->numa_node >= 0) {
      *bw.add_topology_aware_quantity_list() = Quantity(mbps, a->numa_node, name);
      *bw.add_original_topology_aware_quantity_list() = Quantity(mbps, a->numa_node, name);
    }
  }
  return resp;
}

StatusOr<pb::GetTopologyAwareAllocatableResourcesResponse>
NicPlugin::GetTopologyAwareAllocatableResources() {
  pb::GetTopologyAwareAllocatableResourcesResponse resp;
  auto& resources = *resp.mutable_allocatable_resources();
  pb::AllocatableTopologyAwareResource& devices = resources[config_.resource_name];
  devices.set_aggregated_allocatable_quantity(static_cast<double>(nics_.size()));
  devices.set_aggregated_capacity_quantity(static_cast<double>(nics_.size()));
  std::map<int, std::pair<int64_t, int64_t>> bandwidth;  // node -> (allocatable, capacity)
  int64_t allocatable_mbps = 0, capacity_mbps = 0;
  for (const Nic& nic : nics_) {
    allocatable_mbps += nic.capacity_mbps;
    capacity_mbps += nic.speed_mbps;
    if (nic.numa_node < 0) continue;
    const std::string name = nic.key.ToString();
    *devices.add_topology_aware_allocatable_quantity_list() = Quantity(1, nic.numa_node, name);
    *devices.add_topology_aware_capacity_quantity_list() = Quantity(1, nic.numa_node, name);
    bandwidth[nic.numa_node].first += nic.capacity_mbps;
    bandwidth[nic.numa_node].second += nic.speed_mbps;
  }
  if (!config_.bandwidth_resource_name.empty()) {
    pb::AllocatableTopologyAwareResource& bw = resources[config_.bandwidth_resource_name];
    bw.set_is_scalar_resource(true);
    bw.set_aggregated_allocatable_quantity(static_cast<double>(allocatable_mbps));
    bw.set_aggregated_capacity_quantity(static_cast<double>(capacity_mbps));
    for (const auto& [node, mbps] : bandwidth) {
      pb::TopologyAwareQuantity a, c;
      a.set_resource_value(static_cast<double>(mbps.first));
      a.set_node(static_cast<uint64_t>(node));
      a.set_topology_level(pb::NUMA);
      c = a;
      c.set_resource_value(static_cast<double>(mbps.second));
      *bw.add_topology_aware_allocatable_quantity_list() = a;
      *bw.add_topology_aware_capacity_quantity_list() = c;
    }
  }
  return resp;
}

Status NicPlugin::WriteSnapshot() {
  MutexLock lock(mu_);
  return ledger_->WriteSnapshot();
}

}  // namespace qrm::nic
