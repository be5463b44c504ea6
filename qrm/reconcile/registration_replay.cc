// Reconciler::OnPluginRegistered (reconciler.h): a plugin that (re)registers gets back what
// it lost before admission can reach it.
#include "common/log.h"
#include "common/metrics/metrics.h"
#include "qrm/reconcile/reconciler.h"

namespace qrm::reconcile {

std::optional<std::set<std::string>> Reconciler::LivePods() {
  if (view_ == nullptr) return std::nullopt;
  auto live = view_->ListPodUids();
  if (!live.ok()) {
    Logger("reconcile")
        ->info("cannot list the runtime's pods ({}); replaying for every checkpointed pod",
               live.status().message());
    return std::nullopt;
  }
  return std::move(*live);
}

void Reconciler::OnPluginRegistered(const std::shared_ptr<registry::PluginEndpoint>& plugin) {
  auto log = Logger("reconcile");
  // One registration replay at a time: a plugin may register by RPC and be discovered in the
  // directory at once, and two replays reading its report before either replayed would send
  // every lost allocation twice. (Process-wide: registrations are rare, and so is a second host.)
  static Mutex one_at_a_time;
  MutexLock serial(one_at_a_time);
  auto report = plugin->GetResourcesAllocation(rpc_timeout_);
  if (!report.ok()) {
    log->warn(
        "resource={}: cannot read what the registering plugin holds, so nothing is replayed to "
        "it now (reconcile ticks retry): {}",
        plugin->resource(), report.status().message());
    return;
  }
  const std::vector<LostAllocation> lost =
      FindLost(state_.Snapshot(), {{plugin->resource(), &*report}});
  if (lost.empty()) return;
  // Without the runtime's picture every checkpointed pod counts as running: replaying a pod
  // that is gone only allocates what garbage collection releases later, while skipping a
  // running one would let the plugin hand its resources to the next pod.
  const std::optional<std::set<std::string>> live = LivePods();
  int replayed = 0, wanted = 0;
  for (const LostAllocation& l : lost) {
    if (live && !live->contains(l.pod_uid)) continue;  // garbage collection releases it
    ++wanted;
    if (ReplayRegistered(*plugin, l)) {
      ++replayed;
    } else if (!plugin->options().need_reconcile()) {  // need_reconcile ones: every tick
      MutexLock queued(queued_mu_);
      replay_retry_.insert({l.pod_uid, l.container, l.resource});
    }
  }
  metrics::Default()
      .GetCounter("qrm_reconcile_replays_total",
                  "Allocations replayed to a plugin that no longer reported them.")
      .Inc(wanted);
  log->warn(
      "resource={}: the plugin registered without {} allocation(s) of running containers "
      "(it lost its state); replayed {} before admitting anything new to it",
      plugin->resource(), wanted, replayed);
}

bool Reconciler::ReplayRegistered(registry::PluginEndpoint& plugin, const LostAllocation& l) {
  auto log = Logger("reconcile");
  auto pod_lock = admission_.pod_locks().Lock(l.pod_uid);
  const auto stored = state_.GetContainer(l.pod_uid, l.container);
  if (stored == nullptr || !stored->resources.contains(l.resource)) return false;  // gone since
  auto answer = plugin.Allocate(ReplayRequest(*stored, l.resource), rpc_timeout_);
  if (!answer.ok()) {
    log->error("pod={} container={}: replaying {} at registration failed (ticks retry): {}",
               l.pod_uid, l.container, l.resource, answer.status().message());
    return false;
  }
  const auto& result = answer->allocation_result().resource_allocation();
  auto info = result.find(l.resource);
  if (info == result.end()) {
    log->error("pod={} container={}: the replayed Allocate of {} answered no {} allocation",
               l.pod_uid, l.container, l.resource, l.resource);
    return false;
  }
  if (state::SameAsStored(*stored, l.resource, info->second)) return true;
  // The plugin could not give the same back: its answer is what the container holds now.
  if (Status s = StoreLocked(l.pod_uid, l.container, *stored, l.resource, info->second); !s.ok()) {
    log->error("pod={} container={}: cannot store the replayed {}: {}", l.pod_uid, l.container,
               l.resource, s.message());
    return true;
  }
  MutexLock queued(queued_mu_);
  queued_apply_.insert({l.pod_uid, l.container});
  return true;
}

}  // namespace qrm::reconcile
