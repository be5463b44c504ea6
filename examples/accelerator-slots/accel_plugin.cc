#include "examples/accelerator-slots/accel_plugin.h"

#include <cmath>
#include <filesystem>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/log.h"
#include "common/protocol_keys.h"
#include "plugins/sdk/responses.h"

namespace qrm::example {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

pb::TopologyHint ToProto(NumaMask nodes, bool preferred) {
  pb::TopologyHint hint;
  for (int node : nodes.Nodes()) hint.add_nodes(static_cast<uint64_t>(node));
  hint.set_preferred(preferred);
  return hint;
}

pb::TopologyAwareQuantity PerNode(int node, int value) {
  pb::TopologyAwareQuantity q;
  q.set_resource_value(value);
  q.set_node(static_cast<uint64_t>(node));
  q.set_topology_level(pb::NUMA);
  return q;
}

}  // namespace

StatusOr<std::unique_ptr<AccelPlugin>> AccelPlugin::Create(AccelConfig config) {
  StatusOr<SlotPool> pool = SlotPool::Create(config.numa_nodes, config.slots_per_node);
  if (!pool.ok()) return pool.status();
  std::unique_ptr<AccelPlugin> plugin(new AccelPlugin(std::move(config), std::move(*pool)));
  std::lock_guard lock(plugin->mu_);
  QRM_RETURN_IF_ERROR(plugin->Restore());
  return plugin;
}

AccelPlugin::AccelPlugin(AccelConfig config, SlotPool pool)
    : config_(std::move(config)), pool_(std::move(pool)) {}

pb::ResourcePluginOptions AccelPlugin::Options() const {
  pb::ResourcePluginOptions options;
  // We answer GetTopologyHints with real NUMA hints.
  options.set_with_topology_alignment(true);
  // A grant never changes after Allocate, so the host need not poll
  // GetResourcesAllocation to reconcile running containers.
  options.set_need_reconcile(false);
  // Nothing to do just before a container starts.
  options.set_pre_start_required(false);
  return options;
}

StatusOr<int> AccelPlugin::RequestedSlots(const pb::ResourceRequest& req) const {
  auto it = req.resource_requests().find(config_.resource);
  if (it == req.resource_requests().end()) return 0;
  const double quantity = it->second;
  // (The pool's capacity never changes, so reading it needs no lock.)
  // Written so that NaN fails too (every comparison with NaN is false).
  if (!(quantity >= 0 && quantity <= pool_.Capacity() && quantity == std::floor(quantity))) {
    return InvalidArgumentError(
        fmt::format("resource_requests[\"{}\"] = {}: must be a whole number of slots from 0 to {}",
                    config_.resource, quantity, pool_.Capacity()));
  }
  return static_cast<int>(quantity);
}

// [guide:hints]
StatusOr<pb::ResourceHintsResponse> AccelPlugin::GetTopologyHints(const pb::ResourceRequest& req) {
  StatusOr<int> n = RequestedSlots(req);
  if (!n.ok()) return n.status();
  pb::ResourceHintsResponse resp;
  sdk::EchoIdentity(req, config_.resource, &resp);
  // Nothing requested: leave our resource out of resource_hints altogether.
  // An absent entry means "no preference"; an empty list would mean "cannot
  // be satisfied" and could get the pod rejected.
  if (*n == 0) return resp;

  auto& list = (*resp.mutable_resource_hints())[config_.resource];
  std::lock_guard lock(mu_);
  // A container that already holds slots (the host asks again, e.g. after it
  // lost its own state) gets exactly where they are, so that the affinity the
  // host picks agrees with what Allocate will return.
  if (const ContainerSlots* held = Find(req.pod_uid(), req.container_name())) {
    *list.add_hints() = ToProto(held->grant.Nodes(), true);
    return resp;
  }
  // May be empty: the request does not fit what is free right now. Under the
  // best-effort policy the host still calls Allocate, which then refuses it.
  for (const SlotHint& hint : pool_.Hints(*n)) {
    *list.add_hints() = ToProto(hint.nodes, hint.preferred);
  }
  return resp;
}
// [guide:end]

// [guide:allocate]
StatusOr<pb::ResourceAllocationResponse> AccelPlugin::Allocate(const pb::ResourceRequest& req) {
  StatusOr<int> n = RequestedSlots(req);
  if (!n.ok()) return n.status();  // the host prefixes the pod and container itself
  pb::ResourceAllocationResponse resp;
  sdk::EchoIdentity(req, config_.resource, &resp);
  auto& allocations = *resp.mutable_allocation_result()->mutable_resource_allocation();

  std::lock_guard lock(mu_);
  // Idempotent: the host may send Allocate again for a container we already
  // serve (e.g. the RemovePod of a rollback failed and the container is
  // admitted again). Return what it has; never take a second set of slots.
  if (const ContainerSlots* held = Find(req.pod_uid(), req.container_name())) {
    allocations[config_.resource] = InfoFor(*held);
    return resp;
  }
  if (*n == 0) return resp;  // nothing to hold: no entry, nothing recorded

  StatusOr<NumaMask> within = HintNodes(req);
  if (!within.ok()) return within.status();
  StatusOr<Grant> grant = TakeFor(req, *n, *within);
  if (!grant.ok()) return grant.status().WithContext(fmt::format("{} = {}", config_.resource, *n));

  // Record, then persist before answering: once the host hears "allocated" it
  // starts the container, so the grant must survive our own crash.
  PodSlots& pod = pods_[req.pod_uid()];
  pod.name = req.pod_name();
  pod.ns = req.pod_namespace();
  ContainerSlots& slots = pod.containers[req.container_name()];
  slots = {*grant, *within, req.hint().preferred()};
  const StoredSlots stored{pod.name, pod.ns, slots};
  if (Status saved =
          ledger_ ? ledger_->Put(req.pod_uid(), req.container_name(), stored) : Status::Ok();
      !saved.ok()) {
    // Undo, so memory matches the file; the host rolls the admission back.
    pool_.Release(*grant);
    pod.containers.erase(req.container_name());
    if (pod.containers.empty()) pods_.erase(req.pod_uid());
    return saved.WithContext("persisting the allocation");
  }
  allocations[config_.resource] = InfoFor(slots);
  Logger("accel-slots")
      ->info("{}: allocated {} (free: {})", sdk::RefOf(req), grant->ToString(),
             pool_.FreeSummary());
  return resp;
}
// [guide:end]

StatusOr<NumaMask> AccelPlugin::HintNodes(const pb::ResourceRequest& req) const {
  // qrm-host always sends the merged affinity; under topology policy `none` that is every
  // NUMA node of the machine, not preferred. A caller that sends no nodes means "anywhere".
  if (req.hint().nodes_size() == 0) return pool_.nodes();
  std::vector<int64_t> ids;
  for (uint64_t id : req.hint().nodes()) {
    ids.push_back(id > 1000 ? 1000 : static_cast<int64_t>(id));  // FromNodes names it
  }
  StatusOr<NumaMask> mask = NumaMask::FromNodes(ids);
  if (!mask.ok()) return mask.status().WithContext("hint.nodes");
  return mask;
}

// [guide:previous-allocation]
StatusOr<Grant> AccelPlugin::TakeFor(const pb::ResourceRequest& req, int n, NumaMask within) {
  // A replay after this plugin lost its state: the host names what the
  // container got from us before. Take exactly that again while it is free,
  // so that what the running container was told (ACCEL_NUMA_NODES) stays true.
  auto previous = req.annotations().find(kPreviousAllocationAnnotation);
  if (previous != req.annotations().end()) {
    StatusOr<Grant> before = Grant::Parse(previous->second);
    if (before.ok() && before->Total() == n && pool_.Reserve(*before).ok()) return before;
    Logger("accel-slots")
        ->warn("{}: cannot give back {} \"{}\"; allocating anew", sdk::RefOf(req),
               kPreviousAllocationAnnotation, previous->second);
  }
  return pool_.Take(n, within);
}
// [guide:end]

const AccelPlugin::ContainerSlots* AccelPlugin::Find(const std::string& pod_uid,
                                                     const std::string& container) const {
  auto pod = pods_.find(pod_uid);
  if (pod == pods_.end()) return nullptr;
  auto c = pod->second.containers.find(container);
  return c == pod->second.containers.end() ? nullptr : &c->second;
}

pb::ResourceAllocationInfo AccelPlugin::InfoFor(const ContainerSlots& slots) const {
  pb::ResourceAllocationInfo info;
  // No cgroup field is ours: oci_property_name stays empty, so the host only
  // adds the envs and annotations below to the container.
  info.set_is_scalar_resource(true);
  info.set_allocated_quantity(slots.grant.Total());
  info.set_allocation_result(slots.grant.ToString());
  (*info.mutable_envs())["ACCEL_SLOTS"] = std::to_string(slots.grant.Total());
  (*info.mutable_envs())["ACCEL_NUMA_NODES"] = slots.grant.Nodes().ToString();
  (*info.mutable_annotations())[config_.resource] = slots.grant.ToString();
  *info.mutable_resource_hints()->add_hints() = ToProto(slots.hint, slots.hint_preferred);
  for (const auto& [node, count] : slots.grant.slots_by_node) {
    (*info.mutable_topology_assignments())[static_cast<uint64_t>(node)] =
        static_cast<uint64_t>(count);
  }
  return info;
}

Status AccelPlugin::RemovePod(const std::string& pod_uid) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(pod_uid);
  // Unknown pods succeed: the host removes every pod from every plugin, and
  // retries after failures.
  if (it == pods_.end()) return Status::Ok();
  PodSlots removed = std::move(it->second);
  pods_.erase(it);
  for (const auto& [name, slots] : removed.containers) pool_.Release(slots.grant);
  if (Status saved = ledger_ ? ledger_->RemovePod(pod_uid) : Status::Ok(); !saved.ok()) {
    // Keep holding the slots: the host keeps the pod and calls us again.
    for (const auto& [name, slots] : removed.containers) (void)pool_.Reserve(slots.grant);
    pods_[pod_uid] = std::move(removed);
    return saved.WithContext("persisting the release");
  }
  Logger("accel-slots")->info("pod={}: released (free: {})", pod_uid, pool_.FreeSummary());
  return Status::Ok();
}

StatusOr<pb::GetResourcesAllocationResponse> AccelPlugin::GetResourcesAllocation() {
  pb::GetResourcesAllocationResponse resp;
  std::lock_guard lock(mu_);
  for (const auto& [uid, pod] : pods_) {
    auto& containers = *(*resp.mutable_pod_resources())[uid].mutable_container_resources();
    for (const auto& [name, slots] : pod.containers) {
      (*containers[name].mutable_resource_allocation())[config_.resource] = InfoFor(slots);
    }
  }
  return resp;
}

pb::TopologyAwareResource AccelPlugin::TopologyAwareFor(const Grant& grant) const {
  pb::TopologyAwareResource r;
  r.set_is_scalar_resource(true);
  r.set_aggregated_quantity(grant.Total());
  r.set_original_aggregated_quantity(grant.Total());
  for (const auto& [node, count] : grant.slots_by_node) {
    *r.add_topology_aware_quantity_list() = PerNode(node, count);
    *r.add_original_topology_aware_quantity_list() = PerNode(node, count);
  }
  return r;
}

StatusOr<pb::GetTopologyAwareResourcesResponse> AccelPlugin::GetTopologyAwareResources(
    const pb::GetTopologyAwareResourcesRequest& req) {
  std::lock_guard lock(mu_);
  const ContainerSlots* slots = Find(req.pod_uid(), req.container_name());
  if (slots == nullptr) {
    return NotFoundError(fmt::format("pod uid \"{}\" container \"{}\": holds no {}", req.pod_uid(),
                                     req.container_name(), config_.resource));
  }
  pb::GetTopologyAwareResourcesResponse resp;
  resp.set_pod_uid(req.pod_uid());
  const PodSlots& pod = pods_.at(req.pod_uid());
  resp.set_pod_name(pod.name);
  resp.set_pod_namespace(pod.ns);
  auto* container = resp.mutable_container_topology_aware_resources();
  container->set_container_name(req.container_name());
  (*container->mutable_allocated_resources())[config_.resource] = TopologyAwareFor(slots->grant);
  return resp;
}

StatusOr<pb::GetTopologyAwareAllocatableResourcesResponse>
AccelPlugin::GetTopologyAwareAllocatableResources() {
  pb::GetTopologyAwareAllocatableResourcesResponse resp;
  auto& r = (*resp.mutable_allocatable_resources())[config_.resource];
  r.set_is_scalar_resource(true);
  // Capacity is what the machine has; allocatable is what pods can be given in all (nothing
  // is reserved here), not what is free now: the kubelet publishes it as the node's
  // allocatable and the scheduler subtracts the pods' requests itself, so free slots reported
  // here would count every allocation twice. What is free shows in GetResourcesAllocation.
  // (The pool's shape never changes, so reading it needs no lock.)
  r.set_aggregated_capacity_quantity(pool_.Capacity());
  r.set_aggregated_allocatable_quantity(pool_.Capacity());
  for (int node : pool_.nodes().Nodes()) {
    *r.add_topology_aware_capacity_quantity_list() = PerNode(node, pool_.slots_per_node());
    *r.add_topology_aware_allocatable_quantity_list() = PerNode(node, pool_.slots_per_node());
  }
  return resp;
}

// --- Persistence ---------------------------------------------------------------
//
// One ledger entry per container (Integers and strings only: checkpoints refuse
// floating-point numbers):
//   {"pod_name": "...", "pod_namespace": "...", "slots": "node0:2,node1:1",
//    "hint": "0-1", "hint_preferred": true}

// [guide:ledger]
void AccelPlugin::StoredSlots::Encode(sdk::EntryWriter& w) const {
  w.Set("pod_name", pod_name);
  w.Set("pod_namespace", pod_namespace);
  w.Set("slots", slots.grant.ToString());
  w.Set("hint", slots.hint.ToString());
  w.Set("hint_preferred", slots.hint_preferred);
}

StatusOr<AccelPlugin::StoredSlots> AccelPlugin::StoredSlots::Decode(const sdk::EntryReader& r) {
  StoredSlots stored;
  QRM_ASSIGN_OR_RETURN(stored.pod_name, r.String("pod_name"));
  QRM_ASSIGN_OR_RETURN(stored.pod_namespace, r.String("pod_namespace"));
  QRM_ASSIGN_OR_RETURN(const std::string slots, r.String("slots"));
  QRM_ASSIGN_OR_RETURN(const std::string hint, r.String("hint"));
  QRM_ASSIGN_OR_RETURN(stored.slots.hint_preferred, r.Bool("hint_preferred"));
  StatusOr<Grant> grant = Grant::Parse(slots);
  if (!grant.ok()) return DataLossError("slots: " + grant.status().message());
  StatusOr<NumaMask> nodes = NumaMask::Parse(hint);
  if (!nodes.ok()) return DataLossError("hint: " + nodes.status().message());
  stored.slots.grant = *grant;
  stored.slots.hint = *nodes;
  return stored;
}

Status AccelPlugin::Restore() {
  if (config_.state_path.empty()) return Status::Ok();
  sdk::LedgerOptions options;
  options.path = config_.state_path;  // and <path>.journal beside it
  options.component = "accel-slots";
  options.version = kStateVersion;
  options.oldest_version = 1;  // read once through UpgradeVersion1
  options.reset_state = config_.reset_state;
  options.journal_write.sync = config_.state_sync;
  // Take back every container's slots. A record that no longer fits (the plugin now runs
  // with fewer nodes or slots than when it handed them out) stops the start: the slots may
  // be in use.
  SlotPool pool = pool_;
  const auto fits = [&](const Ledger::Contents& held) -> Status {
    for (const auto& [uid, containers] : held.pods) {
      for (const auto& [name, stored] : containers) {
        if (Status s = pool.Reserve(stored.slots.grant); !s.ok()) {
          // Not corruption: the configuration shrank under running containers.
          const StatusCode code = s.code() == StatusCode::kResourceExhausted
                                      ? s.code()
                                      : StatusCode::kFailedPrecondition;
          return Status(code, fmt::format("pod {} container {}: {}", uid, name, s.message()));
        }
      }
    }
    return Status::Ok();
  };
  QRM_ASSIGN_OR_RETURN(auto opened, Ledger::Open(options, fits, UpgradeVersion1));
  for (const auto& [uid, containers] : opened.contents.pods) {
    for (const auto& [name, stored] : containers) {
      PodSlots& pod = pods_[uid];
      pod.name = stored.pod_name;
      pod.ns = stored.pod_namespace;
      pod.containers[name] = stored.slots;
    }
  }
  if (opened.load.restored) pool_ = std::move(pool);
  ledger_ = std::move(opened.ledger);
  Logger("accel-slots")
      ->info("restored {} pod(s) from {} (free: {})", pods_.size(), options.path,
             pool_.FreeSummary());
  return Status::Ok();
}
// [guide:end]

// Version 1: {"pods": {"<uid>": {"name": "...", "namespace": "...", "containers": {"<name>":
//   {"slots": {"<node>": <count>}, "hint": "0-1", "hint_preferred": true}}}}}
StatusOr<AccelPlugin::Ledger::Contents> AccelPlugin::UpgradeVersion1(const rapidjson::Value& data,
                                                                     uint32_t) {
  const auto bad = [](const std::string& where, const char* what) {
    return DataLossError(fmt::format("version 1: {}: {}", where, what));
  };
  if (!data.HasMember("pods") || !data["pods"].IsObject()) return bad("data", "no \"pods\" object");
  Ledger::Contents contents;
  for (const auto& p : data["pods"].GetObject()) {
    const std::string uid = p.name.GetString();
    const rapidjson::Value& pod = p.value;
    if (!pod.IsObject() || !pod.HasMember("name") || !pod["name"].IsString() ||
        !pod.HasMember("namespace") || !pod["namespace"].IsString() ||
        !pod.HasMember("containers") || !pod["containers"].IsObject()) {
      return bad("pod " + uid, "needs string name, namespace and object containers");
    }
    for (const auto& c : pod["containers"].GetObject()) {
      const std::string where = "pod " + uid + " container " + c.name.GetString();
      const rapidjson::Value& v = c.value;
      if (!v.IsObject() || !v.HasMember("slots") || !v["slots"].IsObject() ||
          !v.HasMember("hint") || !v["hint"].IsString() || !v.HasMember("hint_preferred") ||
          !v["hint_preferred"].IsBool()) {
        return bad(where, "needs object slots, string hint and bool hint_preferred");
      }
      StoredSlots stored{pod["name"].GetString(), pod["namespace"].GetString(), {}};
      for (const auto& s : v["slots"].GetObject()) {
        StatusOr<NumaMask> node = NumaMask::Parse(s.name.GetString());
        if (!node.ok() || node->Count() != 1 || !s.value.IsInt()) {
          return bad(where, "slots must map one NUMA node id to an integer");
        }
        stored.slots.grant.slots_by_node[node->Nodes().front()] = s.value.GetInt();
      }
      StatusOr<NumaMask> hint = NumaMask::Parse(v["hint"].GetString());
      if (stored.slots.grant.slots_by_node.empty() || !hint.ok()) {
        return bad(where, "holds no slots, or its hint is not a NUMA node list");
      }
      stored.slots.hint = *hint;
      stored.slots.hint_preferred = v["hint_preferred"].GetBool();
      contents.pods[uid][c.name.GetString()] = std::move(stored);
    }
  }
  return contents;
}

Status AdoptLegacyStateFile(const std::string& legacy, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(legacy, ec)) return Status::Ok();
  if (fs::exists(path, ec)) {
    Logger("accel-slots")->warn("state file {} exists; ignoring the old {}", path, legacy);
    return Status::Ok();
  }
  const fs::path dir = fs::path(path).parent_path();
  if (!dir.empty()) fs::create_directories(dir, ec);
  if (!ec) fs::rename(legacy, path, ec);  // same file system under /var/lib/qrm: atomic
  // A ledger's journal goes with it (a version 1 file has none).
  if (!ec && fs::exists(legacy + ".journal", ec))
    fs::rename(legacy + ".journal", path + ".journal", ec);
  if (ec) {
    return ErrnoError(ec.value(), "move the old state file to the state directory",
                      fmt::format("{} -> {}", legacy, path));
  }
  Logger("accel-slots")->info("moved the old state file {} to {}", legacy, path);
  return Status::Ok();
}

}  // namespace qrm::example
