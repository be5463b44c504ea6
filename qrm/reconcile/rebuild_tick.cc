// Step 2b of a reconcile tick (reconciler.h): where the plugins and the host checkpoint
// disagree about which containers hold a resource, converge them (rebuild.h finds the cases).
#include <fmt/format.h>

#include "common/log.h"
#include "qrm/reconcile/reconciler.h"

namespace qrm::reconcile {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

void LogReplay(const LostAllocation& l, const state::ContainerAllocation& stored) {
  if (l.skipped) {
    Logger("reconcile")
        ->warn(
            "pod={} container={}: admitted without {} (its plugin was unavailable); its plugin "
            "answers again, sending the skipped Allocate",
            l.pod_uid, l.container, l.resource);
  } else {
    Logger("reconcile")
        ->warn(
            "pod={} container={}: resource {} lost its allocation on the plugin; replaying "
            "Allocate with the stored request and previous allocation \"{}\"",
            l.pod_uid, l.container, l.resource,
            stored.resources.at(l.resource).allocation_result());
  }
}

}  // namespace

void Reconciler::Rebuild(const state::PodResources& before, const std::vector<Polled>& polled,
                         std::vector<state::StateStore::ResourceChange>& changes, Touched& touched,
                         ReconcileStats& stats) {
  if (view_ == nullptr) return;  // without the runtime's picture nothing is safe to rebuild
  std::vector<PluginReport> reports;
  std::map<std::string, std::shared_ptr<registry::PluginEndpoint>> by_resource;
  for (const Polled& p : polled) {  // a plugin that did not answer proves nothing
    reports.push_back({p.plugin->resource(), &p.response});
    by_resource[p.plugin->resource()] = p.plugin;
  }
  const std::vector<UnrecordedContainer> unrecorded = FindUnrecorded(before, reports);
  const std::vector<HeldSkipped> held = FindHeldSkipped(before, reports);
  std::vector<LostAllocation> lost = LostToReplay(before, reports, by_resource);
  for (LostAllocation& s : FindSkipped(before, reports)) {
    lost.push_back(std::move(s));
  }
  if (unrecorded.empty() && lost.empty() && held.empty()) return;
  // Listed after the plugins answered. A pod's sandbox is ready before any Allocate for it,
  // so a pod a plugin reported that is not listed now is gone for good.
  auto live = view_->ListPodUids();
  if (!live.ok()) {
    Logger("reconcile")
        ->warn("cannot list the runtime's pods; skipping the rebuild: {}", live.status().message());
    return;
  }
  AdoptHeldSkipped(held, *live, stats);
  ReplayLost(lost, *live, by_resource, changes, touched, stats);
  AdoptUnrecorded(before, unrecorded, *live, by_resource, stats);
}

std::vector<LostAllocation> Reconciler::LostToReplay(
    const state::PodResources& before, const std::vector<PluginReport>& reports,
    const std::map<std::string, std::shared_ptr<registry::PluginEndpoint>>& by_resource) {
  MutexLock queued(queued_mu_);
  std::vector<LostAllocation> out;
  for (LostAllocation& l : FindLost(before, reports)) {
    const bool retry = replay_retry_.erase({l.pod_uid, l.container, l.resource}) > 0;
    if (retry || by_resource.at(l.resource)->options().need_reconcile()) {
      out.push_back(std::move(l));
    }
  }
  // Retries of a resource that answered and no longer misses them are done.
  std::erase_if(replay_retry_,
                [&](const auto& key) { return by_resource.contains(std::get<2>(key)); });
  return out;
}

Status Reconciler::StoreLocked(const std::string& uid, const std::string& container,
                               const state::ContainerAllocation& stored,
                               const std::string& resource,
                               const pb::ResourceAllocationInfo& info) {
  state::ContainerAllocation next;
  next.request = WithoutSkipped(stored.request, resource);
  next.resources = stored.resources;
  next.resources[resource] = info;
  if (auto update = apply::BuildContainerUpdate(next.resources); !update.ok())
    return update.status();
  const auto pod = state_.GetPod(uid);
  if (pod == nullptr) return NotFoundError(fmt::format("pod={}: no longer admitted", uid));
  return state_.PutContainer(uid, pod->name, pod->ns, container, std::move(next));
}

void Reconciler::AdoptHeldSkipped(const std::vector<HeldSkipped>& held,
                                  const std::set<std::string>& live, ReconcileStats& stats) {
  auto log = Logger("reconcile");
  for (const HeldSkipped& h : held) {
    if (!live.contains(h.pod_uid)) continue;  // garbage collection releases it
    auto pod_lock = admission_.pod_locks().Lock(h.pod_uid);
    const auto stored = state_.GetContainer(h.pod_uid, h.container);
    if (stored == nullptr || stored->resources.contains(h.resource)) continue;  // changed since
    if (Status s = StoreLocked(h.pod_uid, h.container, *stored, h.resource, h.info); !s.ok()) {
      log->error("pod={} container={}: cannot adopt the late {} allocation, retrying next tick: {}",
                 h.pod_uid, h.container, h.resource, s.message());
      continue;
    }
    ++stats.late_adopted;
    pending_apply_[{h.pod_uid, h.container}] = false;
    log->warn(
        "pod={} container={}: admitted without {} (its plugin missed the deadline), but the plugin "
        "allocated it after all (\"{}\"); adopted",
        h.pod_uid, h.container, h.resource, h.info.allocation_result());
  }
}

void Reconciler::ReplayLost(
    const std::vector<LostAllocation>& lost, const std::set<std::string>& live,
    const std::map<std::string, std::shared_ptr<registry::PluginEndpoint>>& by_resource,
    std::vector<state::StateStore::ResourceChange>& changes, Touched& touched,
    ReconcileStats& stats) {
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
    const admission::SkippedStatus::Key key{l.pod_uid, l.container, l.resource};
    // A skipped resource its plugin already refused is retried quietly (said once).
    if (!l.skipped || admission_.skipped_status().Refusal(key).empty()) LogReplay(l, *stored);
    auto answer =
        by_resource.at(l.resource)->Allocate(ReplayRequest(*stored, l.resource), rpc_timeout_);
    if (!answer.ok()) {
      if (l.skipped && !admission::IsPluginOutage(answer.status())) {
        // Refused: said once, not each tick (qrm/admission/skipped_status.h).
        admission_.skipped_status().ReplayFailed(key, answer.status());
        continue;
      }
      log->error("pod={} container={}: replaying {} failed, retrying next tick: {}", l.pod_uid,
                 l.container, l.resource, answer.status().message());
      if (!l.skipped) {
        MutexLock queued(queued_mu_);
        replay_retry_.insert({l.pod_uid, l.container, l.resource});
      }
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
    if (l.skipped) {  // stored now, so the resource also leaves the skipped list
      Status s = StoreLocked(l.pod_uid, l.container, *stored, l.resource, info->second);
      if (s.ok()) pending_apply_[{l.pod_uid, l.container}] = false;
      if (!s.ok()) log->error("pod={} container={}: {}", l.pod_uid, l.container, s.message());
      continue;
    }
    if (state::SameAsStored(*stored, l.resource, info->second)) continue;
    changes.push_back({l.pod_uid, l.container, l.resource, info->second});
    touched.insert({l.pod_uid, l.container});
  }
}

}  // namespace qrm::reconcile
