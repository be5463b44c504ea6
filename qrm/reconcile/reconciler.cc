#include "qrm/reconcile/reconciler.h"

#include "common/log.h"
#include "common/metrics/metrics.h"
#include "qrm/admission/parallel.h"

namespace qrm::host {

Reconciler::Reconciler(PluginRegistry& registry, StateStore& state, Admission& admission,
                       RuntimeApplier& applier, RuntimeView* view,
                       boost::asio::thread_pool& workers, std::chrono::milliseconds rpc_timeout)
    : registry_(registry),
      state_(state),
      admission_(admission),
      applier_(applier),
      view_(view),
      workers_(workers),
      rpc_timeout_(rpc_timeout) {}

StatusOr<ReconcileStats> Reconciler::RunOnce() {
  std::lock_guard tick(mu_);
  auto log = Logger("reconcile");
  metrics::Stopwatch watch;
  ReconcileStats stats;
  const PodResources before = state_.Snapshot();

  std::vector<std::shared_ptr<PluginEndpoint>> plugins;
  for (auto& e : registry_.Endpoints()) {
    if (!e->stopped() && e->options().need_reconcile()) plugins.push_back(e);
  }
  auto responses = ParallelMap<StatusOr<pb::GetResourcesAllocationResponse>>(
      workers_, plugins.size(),
      [&](size_t i) { return plugins[i]->GetResourcesAllocation(rpc_timeout_); });
  stats.plugins_polled = static_cast<int>(plugins.size());

  std::vector<StateStore::ResourceChange> changes;
  std::set<std::pair<std::string, std::string>> touched;
  for (size_t i = 0; i < plugins.size(); ++i) {
    if (!responses[i].ok()) {
      ++stats.plugin_errors;
      log->warn("resource={}: GetResourcesAllocation failed: {}", plugins[i]->resource(),
                responses[i].status().message());
      continue;
    }
    for (const auto& [uid, containers] : responses[i]->pod_resources()) {
      auto pod = before.find(uid);
      if (pod == before.end()) continue;
      for (const auto& [name, allocation] : containers.container_resources()) {
        auto container = pod->second->containers.find(name);
        if (container == pod->second->containers.end()) continue;
        for (const auto& [resource, info] : allocation.resource_allocation()) {
          // Only resources this plugin holds for the container are its to change.
          if (resource != plugins[i]->resource() ||
              !container->second.resources.contains(resource)) {
            continue;
          }
          // The stored side's bytes are cached by the store: only `info` is serialized.
          if (SameAsStored(container->second, resource, info)) continue;
          changes.push_back({uid, name, resource, info});
          touched.insert({uid, name});
        }
      }
    }
  }

  Rebuild(before, plugins, responses, changes, touched, stats);

  // Validate each touched container's new owned fields before persisting.
  std::map<std::pair<std::string, std::string>, ContainerUpdate> updates;
  std::vector<StateStore::ResourceChange> valid;
  for (const auto& key : touched) {
    const ContainerAllocation& stored = before.at(key.first)->containers.at(key.second);
    std::map<std::string, pb::ResourceAllocationInfo> merged = stored.resources;
    for (const auto& c : changes) {
      if (c.uid == key.first && c.container == key.second) merged[c.resource] = c.info;
    }
    auto update = BuildContainerUpdate(merged);
    if (!update.ok()) {
      log->error("pod={} container={}: ignoring invalid plugin allocation: {}", key.first,
                 key.second, update.status().message());
      continue;
    }
    auto old_update = BuildContainerUpdate(stored.resources);
    if (!old_update.ok() || !(*old_update == *update)) updates[key] = std::move(*update);
    for (const auto& c : changes) {
      if (c.uid == key.first && c.container == key.second) valid.push_back(c);
    }
  }
  if (!valid.empty()) {
    // Each pod's file is written on its own: if some fail, the others' changes are in
    // effect and their containers must still reach the runtime.
    std::set<std::string> failed;
    if (Status s = state_.ApplyChanges(valid, &failed); !s.ok()) {
      for (const auto& [key, update] : updates) {
        if (!failed.contains(key.first)) pending_apply_[key] = false;
      }
      log->error(
          "cannot persist the reconciled changes of {} pod(s); retrying next tick (the other "
          "pods' changes are persisted and will be applied then): {}",
          failed.size(), s.message());
      return s;
    }
    stats.resources_changed = static_cast<int>(valid.size());
  }
  for (const auto& [key, update] : updates) pending_apply_[key] = false;

  // Containers admitted without their CPU plugin follow the exclusive CPUs
  // (qrm/admission/confinement.h).
  admission_.confinement().Refresh(state_.Snapshot(), updates, pending_apply_);

  // Apply changed containers (and retry earlier failures) exactly once each.
  for (auto it = pending_apply_.begin(); it != pending_apply_.end();) {
    const auto& [uid, name] = it->first;
    StatusOr<ContainerUpdate> update = updates.count(it->first)
                                           ? StatusOr<ContainerUpdate>(updates.at(it->first))
                                           : admission_.CurrentUpdate(uid, name);
    if (!update.ok()) {  // container gone meanwhile
      it = pending_apply_.erase(it);
      continue;
    }
    if (Status s = applier_.Apply(uid, name, *update); !s.ok()) {
      if (it->second && s.code() == StatusCode::kNotFound) {
        // A re-apply after a restart for a container never created: its CreateContainer
        // (re-admitted from the checkpoint) carries the fields.
        it = pending_apply_.erase(it);
        continue;
      }
      ++stats.apply_failures;
      log->warn("pod={} container={}: update failed, retrying next tick: {}", uid, name,
                s.message());
      ++it;
      continue;
    }
    ++stats.containers_applied;
    it = pending_apply_.erase(it);
  }

  if (view_ != nullptr) CollectGarbage(before, stats);
  auto& m = metrics::Default();
  m.GetHistogram("qrm_reconcile_duration_seconds", "Duration of one reconcile tick.")
      .Observe(watch.Seconds());
  m.GetCounter("qrm_reconcile_updates_applied_total",
               "Container updates the reconcile loop pushed to the runtime.")
      .Inc(stats.containers_applied);
  m.GetCounter("qrm_reconcile_update_failures_total",
               "Container updates the runtime refused (retried next tick).")
      .Inc(stats.apply_failures);
  m.GetCounter("qrm_reconcile_pods_collected_total",
               "Pods released because the runtime no longer has them.")
      .Inc(stats.pods_collected);
  m.GetCounter("qrm_reconcile_replays_total",
               "Allocations replayed to a plugin that no longer reported them.")
      .Inc(stats.replays);
  m.GetCounter("qrm_reconcile_containers_adopted_total",
               "Plugin allocations the host checkpoint lacked, adopted for a running container.")
      .Inc(stats.containers_adopted);
  m.GetCounter("qrm_reconcile_orphans_released_total",
               "Pods released on the plugins because neither the host nor the runtime has them.")
      .Inc(stats.orphans_released);
  if (stats.resources_changed > 0 || stats.pods_collected > 0 || stats.replays > 0 ||
      stats.containers_adopted > 0 || stats.orphans_released > 0) {
    log->info(
        "tick: {} plugin(s), {} resource change(s), {} container(s) updated, {} pod(s) "
        "collected, {} replay(s), {} container(s) adopted, {} orphan pod(s) released",
        stats.plugins_polled, stats.resources_changed, stats.containers_applied,
        stats.pods_collected, stats.replays, stats.containers_adopted, stats.orphans_released);
  }
  return stats;
}

void Reconciler::QueueReapply(const PodResources& pods) {
  std::lock_guard tick(mu_);
  for (const auto& [uid, pod] : pods) {
    for (const auto& [name, container] : pod->containers)
      pending_apply_.emplace(std::pair{uid, name}, true);
  }
}

void Reconciler::CollectGarbage(const PodResources& before, ReconcileStats& stats) {
  auto log = Logger("reconcile");
  auto live = view_->ListPodUids();
  if (!live.ok()) {
    log->warn("cannot list the runtime's pods; skipping garbage collection: {}",
              live.status().message());
    return;
  }
  for (const auto& [uid, pod] : before) {
    if (live->count(uid)) continue;
    if (admission_.RemovePod(uid).ok()) {
      ++stats.pods_collected;
      log->info("pod={}/{}({}): gone from the runtime, released", pod->ns, pod->name, uid);
    }
  }
}

void Reconciler::Rebuild(const PodResources& before,
                         const std::vector<std::shared_ptr<PluginEndpoint>>& plugins,
                         const std::vector<StatusOr<pb::GetResourcesAllocationResponse>>& responses,
                         std::vector<StateStore::ResourceChange>& changes,
                         std::set<std::pair<std::string, std::string>>& touched,
                         ReconcileStats& stats) {
  if (view_ == nullptr) return;  // without the runtime's picture nothing is safe to rebuild
  std::vector<PluginReport> reports;
  std::map<std::string, std::shared_ptr<PluginEndpoint>> by_resource;
  for (size_t i = 0; i < plugins.size(); ++i) {
    if (!responses[i].ok()) continue;  // a plugin that did not answer proves nothing
    reports.push_back({plugins[i]->resource(), &*responses[i]});
    by_resource[plugins[i]->resource()] = plugins[i];
  }
  const std::vector<UnrecordedContainer> unrecorded = FindUnrecorded(before, reports);
  std::vector<LostAllocation> lost = FindLost(before, reports);
  for (LostAllocation& s : FindSkipped(before, reports)) {
    lost.push_back(std::move(s));
  }
  if (unrecorded.empty() && lost.empty()) return;
  // Listed after the plugins answered. A pod's sandbox is ready before any Allocate for it,
  // so a pod a plugin reported that is not listed now is gone for good.
  auto live = view_->ListPodUids();
  if (!live.ok()) {
    Logger("reconcile")
        ->warn("cannot list the runtime's pods; skipping the rebuild: {}", live.status().message());
    return;
  }
  ReplayLost(lost, *live, by_resource, changes, touched, stats);
  AdoptUnrecorded(before, unrecorded, *live, stats);
}

void Reconciler::ReplayLost(
    const std::vector<LostAllocation>& lost, const std::set<std::string>& live,
    const std::map<std::string, std::shared_ptr<PluginEndpoint>>& by_resource,
    std::vector<StateStore::ResourceChange>& changes,
    std::set<std::pair<std::string, std::string>>& touched, ReconcileStats& stats) {
  auto log = Logger("reconcile");
  for (const LostAllocation& l : lost) {
    if (!live.contains(l.pod_uid)) continue;  // garbage collection releases it
    if (l.skipped && answered_empty_.contains({l.pod_uid, l.container, l.resource})) continue;
    // Under the pod's admission lock: a removal of the pod in flight finishes first, and
    // the re-check below then sees it gone.
    auto pod_lock = admission_.pod_locks().Lock(l.pod_uid);
    const auto stored = state_.GetContainer(l.pod_uid, l.container);
    // Still as found: held (lost) or missing (skipped).
    if (stored == nullptr || stored->resources.contains(l.resource) == l.skipped) continue;
    ++stats.replays;
    const SkippedStatus::Key key{l.pod_uid, l.container, l.resource};
    const bool refused_before = !admission_.skipped_status().Refusal(key).empty();
    if (l.skipped && !refused_before) {
      log->warn(
          "pod={} container={}: admitted without {} (its plugin was unavailable); its plugin "
          "answers again, sending the skipped Allocate",
          l.pod_uid, l.container, l.resource);
    } else if (!l.skipped) {
      log->warn(
          "pod={} container={}: resource {} lost its allocation on the plugin; replaying "
          "Allocate with the stored request and previous allocation \"{}\"",
          l.pod_uid, l.container, l.resource, stored->resources.at(l.resource).allocation_result());
    }
    auto answer =
        by_resource.at(l.resource)->Allocate(ReplayRequest(*stored, l.resource), rpc_timeout_);
    if (!answer.ok()) {
      if (l.skipped && !IsPluginOutage(answer.status())) {
        // Refused: said once, not each tick (qrm/admission/skipped_status.h).
        admission_.skipped_status().ReplayFailed(key, answer.status());
        continue;
      }
      log->error("pod={} container={}: replaying {} failed, retrying next tick: {}", l.pod_uid,
                 l.container, l.resource, answer.status().message());
      continue;
    }
    if (l.skipped) admission_.skipped_status().Allocated(key);
    const auto& result = answer->allocation_result().resource_allocation();
    auto info = result.find(l.resource);
    if (info == result.end()) {
      // For a skipped resource that is a valid answer (nothing to hold): do not ask again.
      if (l.skipped) {
        answered_empty_.insert({l.pod_uid, l.container, l.resource});
        continue;
      }
      log->error("pod={} container={}: the replayed Allocate of {} answered no {} allocation",
                 l.pod_uid, l.container, l.resource, l.resource);
      continue;
    }
    if (SameAsStored(*stored, l.resource, info->second)) continue;
    changes.push_back({l.pod_uid, l.container, l.resource, info->second});
    touched.insert({l.pod_uid, l.container});
  }
}

void Reconciler::AdoptUnrecorded(const PodResources& before,
                                 const std::vector<UnrecordedContainer>& found,
                                 const std::set<std::string>& live, ReconcileStats& stats) {
  auto log = Logger("reconcile");
  std::set<std::string> orphans;
  std::vector<const UnrecordedContainer*> candidates;
  for (const UnrecordedContainer& u : found) {
    if (live.contains(u.pod_uid)) {
      candidates.push_back(&u);
    } else if (!before.contains(u.pod_uid)) {
      orphans.insert(u.pod_uid);  // a pod the checkpoint knows is garbage collection's
    }
  }
  for (const std::string& uid : orphans) {
    if (!admission_.RemovePod(uid).ok()) continue;  // logged; retried next tick
    ++stats.orphans_released;
    log->info(
        "pod={}: the plugins held allocations for a pod neither the host checkpoint nor the "
        "runtime has; released",
        uid);
  }
  if (candidates.empty()) return;

  auto listed = view_->ListContainers();
  if (!listed.ok()) {
    if (listed.status().code() != StatusCode::kUnimplemented || !warned_no_container_listing_) {
      log->warn("cannot list the runtime's containers; {} unrecorded allocation(s) not adopted: {}",
                candidates.size(), listed.status().message());
      warned_no_container_listing_ = true;
    }
    return;
  }
  std::map<std::pair<std::string, std::string>, const RuntimeContainer*> by_key;
  for (const RuntimeContainer& c : *listed) by_key[{c.pod_uid, c.container_name}] = &c;
  for (const UnrecordedContainer* u : candidates) {
    auto it = by_key.find({u->pod_uid, u->container});
    // Not created (yet): an admission in flight, or one the runtime refused; the pod's
    // removal releases it.
    if (it == by_key.end()) continue;
    const RuntimeContainer& rc = *it->second;
    auto pod_lock = admission_.pod_locks().Lock(u->pod_uid);
    if (state_.GetContainer(u->pod_uid, u->container) != nullptr) continue;  // admitted meanwhile
    ContainerAllocation allocation = AdoptedAllocation(*u, rc.pod_name, rc.pod_namespace);
    if (auto update = BuildContainerUpdate(allocation.resources); !update.ok()) {
      log->error("pod={} container={}: not adopting an invalid plugin allocation: {}", u->pod_uid,
                 u->container, update.status().message());
      continue;
    }
    if (Status s = state_.PutContainer(u->pod_uid, rc.pod_name, rc.pod_namespace, u->container,
                                       std::move(allocation));
        !s.ok()) {
      log->error("pod={} container={}: cannot adopt, retrying next tick: {}", u->pod_uid,
                 u->container, s.message());
      continue;
    }
    ++stats.containers_adopted;
    pending_apply_[{u->pod_uid, u->container}] = false;
    log->warn(
        "pod={}/{}({}) container={}: adopted {} resource allocation(s) the plugins hold but the "
        "host checkpoint had lost",
        rc.pod_namespace, rc.pod_name, u->pod_uid, u->container, u->resources.size());
  }
}

void Reconciler::Start(boost::asio::io_context& io, std::chrono::milliseconds period) {
  period_ = period;
  stopped_ = false;
  timer_ = std::make_unique<boost::asio::steady_timer>(io);
  Schedule();
}

void Reconciler::Schedule() {
  timer_->expires_after(period_);
  timer_->async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopped_) return;  // cancelled by Stop
    // The tick blocks on plugin RPCs, so it runs on the worker pool, never on
    // the io_context thread that serves the watches.
    boost::asio::post(workers_, [this] {
      (void)RunOnce();
      if (!stopped_) Schedule();
    });
  });
}

void Reconciler::Stop() {
  stopped_ = true;
  if (timer_) timer_->cancel();
}

}  // namespace qrm::host
