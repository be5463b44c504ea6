// Reconciler: keeps every plugin's allocations, the host checkpoint and the runtime in line:
// running containers follow the plugins' latest decisions, pods the runtime no longer has are
// forgotten, and no plugin holds an allocation the host did not admit (or the reverse).
//
// One tick:
//  1. GetResourcesAllocation, in parallel, on every live plugin. need_reconcile decides only
//     whether a plugin's changed values are applied (step 2); the rebuild (2b) uses every
//     plugin's answer, so a plugin without need_reconcile is covered too. (Cost: one call per
//     plugin per tick; the bundled plugins all set need_reconcile anyway.) A plugin answering
//     UNIMPLEMENTED is left out quietly.
//  2. Diff against the host checkpoint, resource by resource, for containers
//     the checkpoint knows (others are not ours), for need_reconcile plugins. The checkpoint's
//     side is compared by the bytes it cached when storing it (SameAsStored), so only
//     the plugins' answers are serialized.
//  3. Write the changes durably, each changed pod's file once
//     (StateStore::ApplyChanges). Pods whose write failed keep their old state
//     and are retried by the next tick; the other pods' changes stand, and
//     their containers are queued for step 4 of the next tick.
//  4. Hand each container whose owned fields changed to the RuntimeApplier,
//     exactly once; containers whose apply failed are retried every tick. After a
//     restart every checkpointed container is handed over once (QueueReapply).
//  2b. Rebuild (rebuild.h), only with a RuntimeView, and only from plugins whose report
//     succeeded; the runtime is listed after the plugins answered (lost allocations are
//     replayed by the ticks only to need_reconcile plugins; other plugins get theirs at
//     registration, and the ticks retry only what failed there):
//     * a container some plugin allocated to but the checkpoint lacks is adopted into
//       the checkpoint (identity from the runtime) if the runtime lists the container;
//       if the runtime lists its pod but not the container, no admitted container owns the
//       allocation (an Allocate that answered after admission's deadline and was rolled
//       back, or a removed container): it is released on that plugin (RemovePod, then the
//       pod's admitted containers replayed to it, as admission's rollback does); if the
//       runtime has no such pod (and the checkpoint neither), the pod is released on the
//       plugins (RemovePod). So no allocation outlives its container;
//     * a container admitted with resource R skipped (failure policy "ignore") whose R
//       plugin holds an allocation for it (its Allocate answered after the deadline) gets
//       that allocation adopted, and R leaves its kSkippedResourcesAnnotation;
//     * a stored allocation of resource R that R's plugin no longer reports is replayed
//       (Allocate with the stored request and the previous allocation as an annotation)
//       once per container and resource per tick, for pods the runtime still lists; the
//       answer joins step 2's changes. So is the Allocate an admission skipped under the
//       "ignore" failure policy, once the skipped resource's plugin answers again (its
//       answer is stored at once, and R leaves the annotation).
//     All re-check the checkpoint under the pod's admission lock, so they never race an
//     admission or a removal of the same pod.
//  5. Garbage collection: pods in the checkpoint (as it was before the runtime
//     was listed, so a pod admitted meanwhile is never collected) that the
//     runtime does not list get RemovePod on every live plugin, and leave the
//     checkpoint only when all of them succeeded.
// Every release (steps 2b and 5) is skipped for a pod whose StopPodSandbox or
// RemovePodSandbox is in flight through the CRI shim: that call releases the pod once the
// runtime confirms (release_claims.h).
//
// Registration: OnPluginRegistered runs for every plugin that registers or re-registers,
// before the registry lets admission reach it. It reads what the plugin holds and replays
// every allocation of a checkpointed container (of a pod the runtime lists, or of every
// checkpointed pod if the runtime cannot be listed) that the plugin does not report: a
// plugin that restarted without its state gets its running containers back before it can
// hand their resources to a new pod, whether it set need_reconcile or not. A replay that
// fails there is retried by the ticks (step 2b).
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include "common/mutex.h"
#include "qrm/admission/admission.h"
#include "qrm/reconcile/container_writer.h"
#include "qrm/reconcile/rebuild.h"
#include "qrm/reconcile/release_claims.h"
#include "qrm/reconcile/runtime.h"
#include "qrm/reconcile/throttle_pusher.h"

namespace qrm::reconcile {

struct ReconcileStats {
  int plugins_polled = 0;
  int plugin_errors = 0;
  int resources_changed = 0;
  int containers_applied = 0;
  int apply_failures = 0;
  int pods_collected = 0;
  int replays = 0;              // Allocate replayed to a plugin that lost an allocation
  int containers_adopted = 0;   // allocations the checkpoint lacked, taken in
  int orphans_released = 0;     // pods released because neither the host nor the runtime has them
  int late_adopted = 0;         // allocations of skipped resources a plugin made late, adopted
  int unadmitted_released = 0;  // containers of live pods released on the plugins holding them
  int releases_deferred = 0;    // pods left to their in-flight StopPodSandbox/RemovePodSandbox
  ThrottleTickStats throttles;  // CPU throttles pushed, expired, forgotten (throttle_pusher.h)
};

class Reconciler {
 public:
  // `view` may be null (no garbage collection).
  Reconciler(registry::PluginRegistry& registry, state::StateStore& state,
             admission::Admission& admission, RuntimeApplier& applier, RuntimeView* view,
             boost::asio::thread_pool& workers,
             std::chrono::milliseconds rpc_timeout = std::chrono::milliseconds(10000));

  // One tick; also what the timer runs.
  StatusOr<ReconcileStats> RunOnce();

  // Queues every container of `pods` for step 4 of the next tick. The host calls it with
  // the checkpoint it loaded: a crash between step 3 (durable) and step 4 leaves a running
  // container behind its checkpointed fields, and no later diff would notice. A container
  // the runtime does not have (kNotFound) is dropped: its CreateContainer carries them.
  void QueueReapply(const state::PodResources& pods);

  // Replays to a plugin that has just (re)registered what it should hold and does not
  // report (see the header comment). The registry calls it before publishing the endpoint.
  void OnPluginRegistered(const std::shared_ptr<registry::PluginEndpoint>& plugin);

  // Pods whose release a runtime call in flight owns (the CRI shim's stop and remove).
  ReleaseClaims& release_claims() { return claims_; }
  // Pushes the host's CPU throttles (the admin API pushes a changed one at once).
  ThrottlePusher& throttle_pusher() { return throttle_pusher_; }
  // Every write of a running container's owned fields goes through it (container_writer.h).
  ContainerWriter& writer() { return writer_; }

  // Per-container entries the reconciler keeps between ticks (replays to retry, applies
  // pending, skipped resources answered empty). Bounded by the containers the runtime still
  // has: a pod's entries go when garbage collection finds it gone. For tests and the soak.
  size_t RememberedEntries();

  // Runs RunOnce every `period` on `io` until Stop.
  void Start(boost::asio::io_context& io, std::chrono::milliseconds period);
  void Stop();

 private:
  // One plugin's successful GetResourcesAllocation answer in this tick.
  struct Polled {
    std::shared_ptr<registry::PluginEndpoint> plugin;
    ::resourceplugin::v1alpha1::GetResourcesAllocationResponse response;
  };
  using Touched = std::set<std::pair<std::string, std::string>>;

  void Schedule();
  std::vector<Polled> PollPlugins(ReconcileStats& stats);
  // Step 2, for need_reconcile plugins.
  static void DiffReconciling(const state::PodResources& before, const std::vector<Polled>& polled,
                              std::vector<state::StateStore::ResourceChange>& changes,
                              Touched& touched);
  void CollectGarbage(const state::PodResources& before, ReconcileStats& stats) QRM_REQUIRES(mu_);
  // Persists the validated changes; the changed containers become pending applies (also
  // those of pods whose write succeeded when another pod's failed).
  Status PersistChanges(
      const std::vector<state::StateStore::ResourceChange>& valid,
      const std::map<std::pair<std::string, std::string>, apply::ContainerUpdate>& updates,
      ReconcileStats& stats) QRM_REQUIRES(mu_);
  void ApplyPending(ReconcileStats& stats) QRM_REQUIRES(mu_);
  // Drops what the reconciler remembers about pods the runtime no longer has and the host
  // no longer holds.
  void ForgetGonePods(const std::set<std::string>& live) QRM_REQUIRES(mu_);
  // Step 2b (see the header comment); replayed answers are added to `changes`/`touched`.
  void Rebuild(const state::PodResources& before, const std::vector<Polled>& polled,
               std::vector<state::StateStore::ResourceChange>& changes, Touched& touched,
               ReconcileStats& stats) QRM_REQUIRES(mu_);
  // FindLost, for need_reconcile plugins and the retries of replay_retry_.
  std::vector<LostAllocation> LostToReplay(
      const state::PodResources& before, const std::vector<PluginReport>& reports,
      const std::map<std::string, std::shared_ptr<registry::PluginEndpoint>>& by_resource);
  void ReplayLost(
      const std::vector<LostAllocation>& lost, const std::set<std::string>& live,
      const std::map<std::string, std::shared_ptr<registry::PluginEndpoint>>& by_resource,
      std::vector<state::StateStore::ResourceChange>& changes, Touched& touched,
      ReconcileStats& stats) QRM_REQUIRES(mu_);
  void AdoptHeldSkipped(const std::vector<HeldSkipped>& held, const std::set<std::string>& live,
                        ReconcileStats& stats) QRM_REQUIRES(mu_);
  void AdoptUnrecorded(
      const state::PodResources& before, const std::vector<UnrecordedContainer>& found,
      const std::set<std::string>& live,
      const std::map<std::string, std::shared_ptr<registry::PluginEndpoint>>& by_resource,
      ReconcileStats& stats) QRM_REQUIRES(mu_);
  void AdoptOne(const UnrecordedContainer& found, const RuntimeContainer& rc, ReconcileStats& stats)
      QRM_REQUIRES(mu_);
  void ReleaseUnadmitted(
      const UnrecordedContainer& found,
      const std::map<std::string, std::shared_ptr<registry::PluginEndpoint>>& by_resource,
      ReconcileStats& stats);
  // Admission::RemovePod of `uid`, unless a runtime call in flight owns its release.
  bool ReleasePod(const std::string& uid, ReconcileStats& stats);
  // Stores `info` as the container's allocation of `resource` (taking `resource` off its
  // skipped list); the caller holds the pod's admission lock. Validated first.
  Status StoreLocked(const std::string& uid, const std::string& container,
                     const state::ContainerAllocation& stored, const std::string& resource,
                     const ::resourceplugin::v1alpha1::ResourceAllocationInfo& info);
  // Registration replay of one lost allocation; true if the plugin got it back.
  bool ReplayRegistered(registry::PluginEndpoint& plugin, const LostAllocation& lost);
  // The runtime's ready pods, or nullopt if there is no view or it cannot answer.
  std::optional<std::set<std::string>> LivePods();

  registry::PluginRegistry& registry_;
  state::StateStore& state_;
  admission::Admission& admission_;
  RuntimeView* view_;
  boost::asio::thread_pool& workers_;
  const std::chrono::milliseconds rpc_timeout_;
  ContainerWriter writer_;
  ThrottlePusher throttle_pusher_;

  Mutex mu_;  // one tick at a time; guards what ticks keep between them
  ReleaseClaims claims_;
  Mutex queued_mu_;  // registration replays run outside ticks
  // Containers whose stored values a registration replay changed, for the next tick's step 4.
  std::set<std::pair<std::string, std::string>> queued_apply_ QRM_GUARDED_BY(queued_mu_);
  // (pod uid, container, resource) a registration replay failed for, on a plugin without
  // need_reconcile: the ticks retry these, and only these, for such plugins. (A plugin that
  // reports nothing would otherwise be sent every allocation again every tick.)
  std::set<std::tuple<std::string, std::string, std::string>> replay_retry_
      QRM_GUARDED_BY(queued_mu_);
  // (pod uid, container) -> whether the runtime's kNotFound ends the retries (a re-apply).
  std::map<std::pair<std::string, std::string>, bool> pending_apply_ QRM_GUARDED_BY(mu_);
  std::unique_ptr<boost::asio::steady_timer> timer_;
  std::chrono::milliseconds period_{3000};
  std::atomic<bool> stopped_{false};
  bool warned_no_container_listing_ QRM_GUARDED_BY(mu_) = false;
  // Skipped resources whose sent Allocate answered no allocation: (pod uid, container,
  // resource), not asked again until a restart.
  std::set<std::tuple<std::string, std::string, std::string>> answered_empty_ QRM_GUARDED_BY(mu_);
};

}  // namespace qrm::reconcile
