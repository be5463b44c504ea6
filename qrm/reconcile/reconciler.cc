#include "qrm/reconcile/reconciler.h"

#include "common/log.h"
#include "common/metrics/metrics.h"
#include "common/parallel_map.h"

namespace qrm::reconcile {

namespace pb = ::resourceplugin::v1alpha1;

Reconciler::Reconciler(registry::PluginRegistry& registry, state::StateStore& state,
                       admission::Admission& admission, RuntimeApplier& applier, RuntimeView* view,
                       boost::asio::thread_pool& workers, std::chrono::milliseconds rpc_timeout)
    : registry_(registry),
      state_(state),
      admission_(admission),
      view_(view),
      workers_(workers),
      rpc_timeout_(rpc_timeout),
      writer_(admission, applier),
      throttle_pusher_(admission, writer_) {}

std::vector<Reconciler::Polled> Reconciler::PollPlugins(ReconcileStats& stats) {
  auto log = Logger("reconcile");
  std::vector<std::shared_ptr<registry::PluginEndpoint>> plugins;
  for (auto& e : registry_.Endpoints()) {
    if (!e->stopped()) plugins.push_back(e);
  }
  auto responses = ParallelMap<StatusOr<pb::GetResourcesAllocationResponse>>(
      workers_, plugins.size(),
      [&](size_t i) { return plugins[i]->GetResourcesAllocation(rpc_timeout_); });
  stats.plugins_polled = static_cast<int>(plugins.size());
  std::vector<Polled> out;
  for (size_t i = 0; i < plugins.size(); ++i) {
    if (responses[i].ok()) {
      out.push_back({plugins[i], std::move(*responses[i])});
      continue;
    }
    // A plugin without need_reconcile may not report at all: then it is not rebuilt.
    if (!plugins[i]->options().need_reconcile() &&
        responses[i].status().code() == StatusCode::kUnimplemented) {
      continue;
    }
    ++stats.plugin_errors;
    log->warn("resource={}: GetResourcesAllocation failed: {}", plugins[i]->resource(),
              responses[i].status().message());
  }
  return out;
}

void Reconciler::DiffReconciling(const state::PodResources& before,
                                 const std::vector<Polled>& polled,
                                 std::vector<state::StateStore::ResourceChange>& changes,
                                 Touched& touched) {
  for (const Polled& p : polled) {
    if (!p.plugin->options().need_reconcile()) continue;
    for (const auto& [uid, containers] : p.response.pod_resources()) {
      auto pod = before.find(uid);
      if (pod == before.end()) continue;
      for (const auto& [name, allocation] : containers.container_resources()) {
        auto container = pod->second->containers.find(name);
        if (container == pod->second->containers.end()) continue;
        for (const auto& [resource, info] : allocation.resource_allocation()) {
          // Only resources this plugin holds for the container are its to change.
          if (resource != p.plugin->resource() || !container->second.resources.contains(resource)) {
            continue;
          }
          // The stored side's bytes are cached by the store: only `info` is serialized.
          if (state::SameAsStored(container->second, resource, info)) continue;
          changes.push_back({uid, name, resource, info});
          touched.insert({uid, name});
        }
      }
    }
  }
}

namespace {

// Each touched container's new owned fields, validated: `updates` gets the containers whose
// fields change, `valid` the changes of every container whose new fields are valid (an invalid
// plugin allocation is logged and ignored, the stored one stays).
void ValidateChanges(const state::PodResources& before,
                     const std::vector<state::StateStore::ResourceChange>& changes,
                     const std::set<std::pair<std::string, std::string>>& touched,
                     std::map<std::pair<std::string, std::string>, apply::ContainerUpdate>& updates,
                     std::vector<state::StateStore::ResourceChange>& valid) {
  for (const auto& key : touched) {
    const state::ContainerAllocation& stored = before.at(key.first)->containers.at(key.second);
    std::map<std::string, pb::ResourceAllocationInfo> merged = stored.resources;
    for (const auto& c : changes) {
      if (c.uid == key.first && c.container == key.second) merged[c.resource] = c.info;
    }
    auto update = apply::BuildContainerUpdate(merged);
    if (!update.ok()) {
      Logger("reconcile")
          ->error("pod={} container={}: ignoring invalid plugin allocation: {}", key.first,
                  key.second, update.status().message());
      continue;
    }
    auto old_update = apply::BuildContainerUpdate(stored.resources);
    if (!old_update.ok() || !(*old_update == *update)) updates[key] = std::move(*update);
    for (const auto& c : changes) {
      if (c.uid == key.first && c.container == key.second) valid.push_back(c);
    }
  }
}

// The tick's metrics, and one log line when it changed anything.
void RecordTick(const ReconcileStats& stats, double seconds) {
  auto log = Logger("reconcile");
  auto& m = metrics::Default();
  m.GetHistogram("qrm_reconcile_duration_seconds", "Duration of one reconcile tick.")
      .Observe(seconds);
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
  m.GetCounter("qrm_reconcile_late_allocations_adopted_total",
               "Allocations of a resource admission skipped that its plugin made after the "
               "deadline, adopted.")
      .Inc(stats.late_adopted);
  m.GetCounter("qrm_reconcile_unadmitted_released_total",
               "Containers of running pods released on the plugins holding them although the "
               "host never admitted them (late Allocate answers, removed containers).")
      .Inc(stats.unadmitted_released);
  if (stats.resources_changed > 0 || stats.pods_collected > 0 || stats.replays > 0 ||
      stats.containers_adopted > 0 || stats.orphans_released > 0 || stats.late_adopted > 0 ||
      stats.unadmitted_released > 0) {
    log->info(
        "tick: {} plugin(s), {} resource change(s), {} container(s) updated, {} pod(s) "
        "collected, {} replay(s), {} container(s) adopted, {} orphan pod(s) released, {} late "
        "allocation(s) adopted, {} unadmitted container(s) released",
        stats.plugins_polled, stats.resources_changed, stats.containers_applied,
        stats.pods_collected, stats.replays, stats.containers_adopted, stats.orphans_released,
        stats.late_adopted, stats.unadmitted_released);
  }
}

}  // namespace

StatusOr<ReconcileStats> Reconciler::RunOnce() {
  MutexLock tick(mu_);
  metrics::Stopwatch watch;
  ReconcileStats stats;
  {
    MutexLock queued(queued_mu_);
    for (const auto& key : queued_apply_) pending_apply_[key] = false;
    queued_apply_.clear();
  }
  const state::PodResources before = state_.Snapshot();
  // First, and independent of the plugins: a lease expires on time even when a plugin is slow.
  stats.throttles = throttle_pusher_.Tick(before);
  const std::vector<Polled> polled = PollPlugins(stats);
  std::vector<state::StateStore::ResourceChange> changes;
  Touched touched;
  DiffReconciling(before, polled, changes, touched);
  Rebuild(before, polled, changes, touched, stats);

  std::map<std::pair<std::string, std::string>, apply::ContainerUpdate> updates;
  std::vector<state::StateStore::ResourceChange> valid;
  ValidateChanges(before, changes, touched, updates, valid);
  QRM_RETURN_IF_ERROR(PersistChanges(valid, updates, stats));
  // Containers admitted without their CPU plugin follow the exclusive CPUs
  // (qrm/admission/confinement.h).
  admission_.confinement().Refresh(state_.Snapshot(), updates, pending_apply_);
  ApplyPending(stats);
  if (view_ != nullptr) CollectGarbage(before, stats);
  RecordTick(stats, watch.Seconds());
  return stats;
}

Status Reconciler::PersistChanges(
    const std::vector<state::StateStore::ResourceChange>& valid,
    const std::map<std::pair<std::string, std::string>, apply::ContainerUpdate>& updates,
    ReconcileStats& stats) {
  if (!valid.empty()) {
    // Each pod's file is written on its own: if some fail, the others' changes are in
    // effect and their containers must still reach the runtime.
    std::set<std::string> failed;
    if (Status s = state_.ApplyChanges(valid, &failed); !s.ok()) {
      for (const auto& [key, update] : updates) {
        if (!failed.contains(key.first)) pending_apply_[key] = false;
      }
      Logger("reconcile")
          ->error(
              "cannot persist the reconciled changes of {} pod(s); retrying next tick (the other "
              "pods' changes are persisted and will be applied then): {}",
              failed.size(), s.message());
      return s;
    }
    stats.resources_changed = static_cast<int>(valid.size());
  }
  for (const auto& [key, update] : updates) pending_apply_[key] = false;
  return Status::Ok();
}

// Applies changed containers (and retries earlier failures) exactly once each.
void Reconciler::ApplyPending(ReconcileStats& stats) {
  auto log = Logger("reconcile");
  for (auto it = pending_apply_.begin(); it != pending_apply_.end();) {
    const auto& [uid, name] = it->first;
    // From the checkpoint as it is now: the rebuild may have stored a container directly
    // (an adoption) besides the changes above.
    bool held = false;
    const Status s = writer_.WriteCurrent(uid, name, [&](const apply::ContainerUpdate&) {
      held = true;
      return true;
    });
    if (!held) {  // container gone meanwhile
      it = pending_apply_.erase(it);
      continue;
    }
    if (!s.ok()) {
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
}

void Reconciler::QueueReapply(const state::PodResources& pods) {
  MutexLock tick(mu_);
  for (const auto& [uid, pod] : pods) {
    for (const auto& [name, container] : pod->containers)
      pending_apply_.emplace(std::pair{uid, name}, true);
  }
}

void Reconciler::CollectGarbage(const state::PodResources& before, ReconcileStats& stats) {
  auto log = Logger("reconcile");
  auto live = view_->ListPodUids();
  if (!live.ok()) {
    log->warn("cannot list the runtime's pods; skipping garbage collection: {}",
              live.status().message());
    return;
  }
  for (const auto& [uid, pod] : before) {
    if (live->count(uid)) continue;
    if (ReleasePod(uid, stats)) {
      ++stats.pods_collected;
      log->info("pod={}/{}({}): gone from the runtime, released", pod->ns, pod->name, uid);
    }
  }
  ForgetGonePods(*live);
}

void Reconciler::ForgetGonePods(const std::set<std::string>& live) {
  // Not listed and not admitted: a pod admitted after the listing keeps its entries, and one
  // whose release is deferred keeps them until the tick that releases it.
  const auto gone = [&](const auto& key) {
    const std::string& uid = std::get<0>(key);
    return !live.contains(uid) && state_.GetPod(uid) == nullptr;
  };
  std::erase_if(answered_empty_, gone);
  std::erase_if(pending_apply_, [&](const auto& entry) { return gone(entry.first); });
  MutexLock queued(queued_mu_);
  std::erase_if(replay_retry_, gone);
  std::erase_if(queued_apply_, gone);
}

size_t Reconciler::RememberedEntries() {
  MutexLock tick(mu_);
  MutexLock queued(queued_mu_);
  return answered_empty_.size() + pending_apply_.size() + replay_retry_.size() +
         queued_apply_.size();
}

bool Reconciler::ReleasePod(const std::string& uid, ReconcileStats& stats) {
  const auto release = claims_.TryRelease(uid);
  if (!release) {
    ++stats.releases_deferred;
    Logger("reconcile")
        ->debug("pod={}: its sandbox's stop or removal is in flight; that call releases it", uid);
    return false;
  }
  return admission_.RemovePod(uid).ok();  // a failure is logged; retried next tick
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

}  // namespace qrm::reconcile
