#include "plugins/cpu/cpu_plugin.h"

#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "common/log.h"
#include "plugins/cpu/cpu_responses.h"
#include "plugins/cpu/dedicated_placement.h"
#include "plugins/cpu/pools.h"
#include "plugins/sdk/responses.h"

namespace qrm::cpu {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

constexpr const char* kComponent = "cpu-plugin";

}  // namespace

StatusOr<std::unique_ptr<CpuPlugin>> CpuPlugin::Create(const machine::MachineTopology& topology,
                                                       CpuPluginConfig config) {
  auto log = Logger(kComponent);
  CpuLayout layout(topology);
  if (layout.online().Empty()) return FailedPreconditionError("the machine has no online CPUs");
  StatusOr<CpuSet> reserved = ResolveReservedCpus(layout, config);
  if (!reserved.ok()) return reserved.status();
  StatusOr<qos::RoleTable> roles = qos::LoadRoleTable(config.roles_json, config.roles_file);
  if (!roles.ok()) return roles.status();
  if (config.reclaimed_pool_size && *config.reclaimed_pool_size < 0 &&
      *config.reclaimed_pool_size != kReclaimedAuto) {
    return InvalidArgumentError(fmt::format(
        "reclaimed-pool-size {}: must be auto, 0 (reclaimed_cores share the shared pool) or more",
        *config.reclaimed_pool_size));
  }

  std::unique_ptr<CpuPlugin> plugin(
      new CpuPlugin(std::move(layout), std::move(*reserved), std::move(*roles), std::move(config)));
  QRM_RETURN_IF_ERROR(plugin->OpenLedger());
  // A resize written while the plugin was down applies now; a bad file is only logged.
  if (!plugin->pool_control_path_.empty() && std::filesystem::exists(plugin->pool_control_path_)) {
    (void)plugin->ReloadPoolControlFile();
  }
  const CpuPools pools = plugin->pools();
  log->info(
      "started: {} containers restored; reserved {}, shared {}, reclaimed {} ({} CPUs, setting "
      "{}), dedicated {}; state {}",
      plugin->state().ContainerCount(), pools.reserved.ToString(), pools.shared.ToString(),
      pools.reclaimed.ToString(), pools.reclaimed.Size(),
      PoolSettingText(plugin->state().setting()), pools.dedicated.ToString(),
      plugin->config_.StatePath().empty() ? std::string("in memory only")
                                          : plugin->config_.StatePath());
  return plugin;
}

Status CpuPlugin::OpenLedger() {
  CpuLedgerOptions options;
  options.path = config_.StatePath();
  options.reset_state = config_.reset_state;
  options.snapshot_write = config_.write_options;
  options.journal_write = config_.journal_options;
  options.pools = [this]() QRM_REQUIRES(mu_) { return state_.pools; };  // snapshots hold mu_
  MutexLock lock(mu_);
  CpuState state;
  QRM_ASSIGN_OR_RETURN(ledger_, CpuLedger::Open(options, layout_, reserved_, &state));
  // Without the flag: the ledger's setting, or auto (CpuState's default) on a first start.
  if (config_.reclaimed_pool_size) state.set_setting({*config_.reclaimed_pool_size, 0});
  if (Status s = RefreshPools(layout_, reserved_, &state); !s.ok()) {
    return s.WithContext(config_.reclaimed_pool_size ? "reclaimed-pool-size"
                                                     : "reclaimed pool size from " + options.path);
  }
  state_ = std::move(state);
  QRM_RETURN_IF_ERROR(ledger_->SetPoolSetting(state_.reclaimed_size, state_.shared_size));
  return ledger_->WriteSnapshot();  // the file describes the running plugin
}

Status CpuPlugin::WriteSnapshot() {
  MutexLock lock(mu_);
  return ledger_->WriteSnapshot();
}

CpuPlugin::CpuPlugin(CpuLayout layout, CpuSet reserved, qos::RoleTable roles,
                     CpuPluginConfig config)
    : layout_(std::move(layout)),
      reserved_(std::move(reserved)),
      roles_(std::move(roles)),
      config_(std::move(config)),
      pool_control_path_(config_.PoolControlPath()) {}

pb::ResourcePluginOptions CpuPlugin::Options() const {
  pb::ResourcePluginOptions options;
  // Pools move at run time (resizes, dedicated admissions): the host must poll us.
  options.set_need_reconcile(true);
  options.set_pre_start_required(false);
  // Dedicated containers get real NUMA hints.
  options.set_with_topology_alignment(true);
  return options;
}

StatusOr<CpuRequest> CpuPlugin::Parse(const pb::ResourceRequest& req) const {
  StatusOr<CpuRequest> parsed =
      ParseCpuRequest(req, roles_, layout_, layout_.online().Difference(reserved_).Size());
  if (!parsed.ok()) return parsed.status().WithContext(fmt::format("{}", sdk::RefOf(req)));
  return parsed;
}

CpuAvailability CpuPlugin::Availability(const CpuState& state) const {
  CpuAvailability avail;
  avail.layout = &layout_;
  avail.allocatable = layout_.online().Difference(reserved_);
  avail.available = avail.allocatable.Difference(state.pools.dedicated);
  avail.keep_free = state.KeepFree();
  for (const auto& [uid, name] : state.BoundDedicated()) {
    const ContainerAllocation& c = *state.Find(uid, name);
    avail.claims.push_back(
        {c.numa_nodes, c.role, c.numa_exclusive, {uid, c.pod_namespace, c.pod_name, name}});
  }
  return avail;
}

Status CpuPlugin::CommitOrUndo(const std::function<Status()>& persist,
                               const std::function<void()>& undo) {
  Status s = RefreshPools(layout_, reserved_, &state_);
  if (s.ok()) s = persist().WithContext("persisting the CPU state");
  if (s.ok()) return s;
  undo();
  // The state before the change had valid pools, so this cannot fail.
  (void)RefreshPools(layout_, reserved_, &state_);
  return s;
}

StatusOr<pb::ResourceHintsResponse> CpuPlugin::GetTopologyHints(const pb::ResourceRequest& req) {
  StatusOr<CpuRequest> parsed = Parse(req);
  if (!parsed.ok()) return parsed.status();
  pb::ResourceHintsResponse resp;
  sdk::EchoIdentity(req, kResourceName, &resp);
  // shared, reclaimed and system containers run on pools that span every node: no preference,
  // which is an absent entry (an empty list would mean "cannot be satisfied").
  if (!parsed->qos.dedicated()) return resp;

  auto& list = (*resp.mutable_resource_hints())[kResourceName];
  MutexLock lock(mu_);
  // Asked again for a container we already serve: where it is, so that the affinity the host
  // picks agrees with what Allocate will answer.
  if (const ContainerAllocation* held = state_.Find(req.pod_uid(), req.container_name())) {
    const NumaMask nodes = held->numa_bound()
                               ? held->numa_nodes
                               : layout_.NodesOf(ContainerCpus(layout_, state_.pools, *held));
    *list.add_hints() = ToProtoHint(nodes, true);
    return resp;
  }
  for (const NumaHint& hint : DedicatedHints(Availability(state_), roles_, parsed->Dedicated())) {
    *list.add_hints() = ToProtoHint(hint.nodes, hint.preferred);
  }
  return resp;
}

StatusOr<pb::ResourceAllocationResponse> CpuPlugin::Allocate(const pb::ResourceRequest& req) {
  StatusOr<CpuRequest> parsed = Parse(req);
  if (!parsed.ok()) return parsed.status();
  pb::ResourceAllocationResponse resp;
  sdk::EchoIdentity(req, kResourceName, &resp);
  auto& out = (*resp.mutable_allocation_result()->mutable_resource_allocation())[kResourceName];

  std::string summary;
  {
    MutexLock lock(mu_);
    // Idempotent: the host may replay Allocate for a container we serve (after its own
    // restart, or a rollback whose RemovePod failed). Same answer, nothing taken twice.
    if (const ContainerAllocation* held = state_.Find(req.pod_uid(), req.container_name())) {
      out = AllocationInfo(layout_, state_.pools, *held);
      return resp;
    }
    ContainerAllocation c;
    c.pod_namespace = req.pod_namespace();
    c.pod_name = req.pod_name();
    c.level = parsed->qos.level;
    c.role = parsed->qos.role;
    c.numa_binding = parsed->qos.numa_binding;
    c.numa_exclusive = parsed->qos.numa_exclusive;
    c.request_milli = parsed->milli;
    if (c.dedicated()) {
      const CpuAvailability avail = Availability(state_);
      std::optional<DedicatedPlacement> again;
      if (parsed->previous) {
        again = PlacePrevious(avail, roles_, parsed->Dedicated(), *parsed->previous);
        Logger(kComponent)
            ->info("{}: replayed allocation: previous CPUs {} {}", sdk::RefOf(req),
                   parsed->previous->ToString(), again ? "taken again" : "are not free any more");
      }
      StatusOr<DedicatedPlacement> placement =
          again ? StatusOr<DedicatedPlacement>(std::move(*again))
                : PlaceDedicated(avail, roles_, parsed->Dedicated(), parsed->hint);
      if (!placement.ok()) {
        return placement.status().WithContext(
            fmt::format("{}: dedicated_cores {} CPUs", sdk::RefOf(req), parsed->whole_cpus));
      }
      c.cpuset = placement->cpus;
      c.numa_nodes = placement->numa_nodes;
    } else if (c.numa_bound()) {
      // A NUMA-bound shared container runs on the shared CPUs of its memory's nodes.
      c.numa_nodes = parsed->hint.empty() ? layout_.cpu_node_mask() : parsed->hint;
    }
    state_.Put(req.pod_uid(), req.container_name(), std::move(c));
    // The ledger records the CPUs the container runs on now (with the pools this admission
    // leaves); a pool container's are recomputed at restart.
    const auto persist = [&]() QRM_REQUIRES(mu_) {
      return ledger_->Put(
          req.pod_uid(), req.container_name(),
          WithCpus(layout_, state_.pools, *state_.Find(req.pod_uid(), req.container_name())));
    };
    Status s = CommitOrUndo(
        persist, [&]() QRM_REQUIRES(mu_) { state_.Erase(req.pod_uid(), req.container_name()); });
    if (!s.ok()) return s.WithContext(fmt::format("{}", sdk::RefOf(req)));
    const ContainerAllocation& placed = *state_.Find(req.pod_uid(), req.container_name());
    out = AllocationInfo(layout_, state_.pools, placed);
    summary = fmt::format("{} cpuset {}{}; pools shared {} reclaimed {}",
                          qos::QosLevelName(placed.level), out.allocation_result(),
                          placed.numa_bound() ? " numa " + placed.numa_nodes.ToString() : "",
                          state_.pools.shared.ToString(), state_.pools.reclaimed.ToString());
  }
  Logger(kComponent)->info("{}: allocated {}", sdk::RefOf(req), summary);
  return resp;
}

Status CpuPlugin::RemovePod(const std::string& pod_uid) {
  std::string summary;
  {
    MutexLock lock(mu_);
    // Unknown pods succeed: the host removes every pod from every plugin, and retries.
    PodAllocations removed = state_.TakePod(pod_uid);
    if (removed.empty()) return Status::Ok();
    Status s = CommitOrUndo([&]() QRM_REQUIRES(mu_) { return ledger_->RemovePod(pod_uid); },
                            [&]() QRM_REQUIRES(mu_) {
                              for (auto& [name, c] : removed) state_.Put(pod_uid, name, c);
                            });
    if (!s.ok()) return s.WithContext(fmt::format("pod={}: releasing its CPUs", pod_uid));
    summary =
        fmt::format("pools shared {} reclaimed {} dedicated {}", state_.pools.shared.ToString(),
                    state_.pools.reclaimed.ToString(), state_.pools.dedicated.ToString());
  }
  Logger(kComponent)->info("pod={}: released; {}", pod_uid, summary);
  return Status::Ok();
}

StatusOr<pb::GetResourcesAllocationResponse> CpuPlugin::GetResourcesAllocation() {
  pb::GetResourcesAllocationResponse resp;
  MutexLock lock(mu_);
  for (const auto& [uid, containers] : state_.pods()) {
    auto& by_name = *(*resp.mutable_pod_resources())[uid].mutable_container_resources();
    for (const auto& [name, c] : containers) {
      (*by_name[name].mutable_resource_allocation())[kResourceName] =
          AllocationInfo(layout_, state_.pools, c);
    }
  }
  return resp;
}

StatusOr<pb::GetTopologyAwareResourcesResponse> CpuPlugin::GetTopologyAwareResources(
    const pb::GetTopologyAwareResourcesRequest& req) {
  MutexLock lock(mu_);
  const ContainerAllocation* c = state_.Find(req.pod_uid(), req.container_name());
  if (c == nullptr) {
    return NotFoundError(fmt::format("pod_uid \"{}\" container_name \"{}\": holds no CPUs",
                                     req.pod_uid(), req.container_name()));
  }
  pb::GetTopologyAwareResourcesResponse resp;
  resp.set_pod_uid(req.pod_uid());
  resp.set_pod_name(c->pod_name);
  resp.set_pod_namespace(c->pod_namespace);
  auto* container = resp.mutable_container_topology_aware_resources();
  container->set_container_name(req.container_name());
  (*container->mutable_allocated_resources())[kResourceName] =
      TopologyAwareCpus(layout_, ContainerCpus(layout_, state_.pools, *c));
  return resp;
}

StatusOr<pb::GetTopologyAwareAllocatableResourcesResponse>
CpuPlugin::GetTopologyAwareAllocatableResources() {
  pb::GetTopologyAwareAllocatableResourcesResponse resp;
  auto& r = (*resp.mutable_allocatable_resources())[kResourceName];
  r.set_is_node_resource(false);
  r.set_is_scalar_resource(true);
  // Fixed at start: the machine's CPUs, and those not reserved for the system.
  const CpuSet allocatable = layout_.online().Difference(reserved_);
  r.set_aggregated_capacity_quantity(layout_.online().Size());
  r.set_aggregated_allocatable_quantity(allocatable.Size());
  AddPerNode(layout_, layout_.online(), r.mutable_topology_aware_capacity_quantity_list());
  AddPerNode(layout_, allocatable, r.mutable_topology_aware_allocatable_quantity_list());
  // The reclaimed pool as it is now, per node, so tools can draw the pools (qrmctl topology).
  CpuSet reclaimed;
  {
    MutexLock lock(mu_);
    reclaimed = state_.pools.reclaimed;
  }
  for (auto& q : *r.mutable_topology_aware_allocatable_quantity_list()) {
    (*q.mutable_annotations())[kReclaimedCpusAnnotation] =
        layout_.NodeCpus(static_cast<int>(q.node())).Intersection(reclaimed).ToString();
  }
  return resp;
}

StatusOr<PoolSetting> CpuPlugin::PoolSettingFor(const PoolSizes& sizes,
                                                const CpuState& state) const {
  const int free = layout_.online().Difference(reserved_).Difference(state.pools.dedicated).Size();
  if (sizes.reclaimed == kReclaimedAuto) {
    if (sizes.shared) {
      return InvalidArgumentError(fmt::format(
          "reclaimed auto and shared {}: an auto reclaimed pool leaves no shared size to set",
          *sizes.shared));
    }
    return PoolSetting{kReclaimedAuto, 0};
  }
  if (sizes.reclaimed && sizes.shared && *sizes.reclaimed + *sizes.shared != free) {
    return InvalidArgumentError(
        fmt::format("reclaimed {} + shared {} = {}, but {} CPUs are neither reserved nor dedicated",
                    *sizes.reclaimed, *sizes.shared, *sizes.reclaimed + *sizes.shared, free));
  }
  if (sizes.reclaimed) return PoolSetting{*sizes.reclaimed, 0};
  if (!sizes.shared) return InvalidArgumentError("pool control: names no pool");
  if (*sizes.shared >= free) {
    return InvalidArgumentError(fmt::format(
        "shared: pool size {} leaves no CPU for the reclaimed pool ({} CPUs are neither reserved "
        "nor dedicated)",
        *sizes.shared, free));
  }
  // The shared size is kept as the setting (not converted to a reclaimed size): a QoS system
  // sizes the shared pool for the load it sees, and dedicated admissions should come out of
  // the reclaimed pool, not out of that pool or be refused to keep the reclaimed one. The
  // reclaimed size recorded beside it (not used while it is set) is the one it gives now.
  return PoolSetting{free - *sizes.shared, *sizes.shared};
}

Status CpuPlugin::ResizePools(const PoolSizes& sizes) {
  std::string summary;
  {
    MutexLock lock(mu_);
    StatusOr<PoolSetting> setting = PoolSettingFor(sizes, state_);
    if (!setting.ok()) return setting.status();
    if (*setting == state_.setting()) return Status::Ok();
    const PoolSetting old = state_.setting();
    state_.set_setting(*setting);
    QRM_RETURN_IF_ERROR(CommitOrUndo(
        [&]() QRM_REQUIRES(mu_) {
          return ledger_->SetPoolSetting(setting->reclaimed_size, setting->shared_size);
        },
        [&]() QRM_REQUIRES(mu_) { state_.set_setting(old); }));
    summary = fmt::format("size setting {} -> {}: reclaimed {}, shared {} ({} containers)",
                          PoolSettingText(old), PoolSettingText(*setting),
                          state_.pools.reclaimed.ToString(), state_.pools.shared.ToString(),
                          state_.ContainerCount());
  }
  Logger(kComponent)->info("pools resized: {}", summary);
  return Status::Ok();
}

Status CpuPlugin::ReloadPoolControlFile() {
  StatusOr<PoolSizes> sizes = ReadPoolControlFile(pool_control_path_);
  Status s = sizes.ok() ? ResizePools(*sizes).WithContext(pool_control_path_) : sizes.status();
  if (!s.ok())
    Logger(kComponent)->error("pool control ignored, pool sizes unchanged: {}", s.message());
  return s;
}

CpuPools CpuPlugin::pools() const {
  MutexLock lock(mu_);
  return state_.pools;
}

int CpuPlugin::reclaimed_size() const {
  MutexLock lock(mu_);
  return state_.reclaimed_size;
}

CpuState CpuPlugin::state() const {
  MutexLock lock(mu_);
  return state_;
}

}  // namespace qrm::cpu
