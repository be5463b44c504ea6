// Reconciler: keeps running containers in line with the plugins' latest
// decisions, and forgets pods the runtime no longer has.
//
// One tick:
//  1. GetResourcesAllocation, in parallel, on every live plugin that asked for
//     reconciling (need_reconcile).
//  2. Diff against the host checkpoint, resource by resource, for containers
//     the checkpoint knows (others are not ours). The checkpoint's side is
//     compared by the bytes it cached when storing it (SameAsStored), so only
//     the plugins' answers are serialized.
//  3. Write the changes durably, each changed pod's file once
//     (StateStore::ApplyChanges). Pods whose write failed keep their old state
//     and are retried by the next tick; the other pods' changes stand, and
//     their containers are queued for step 4 of the next tick.
//  4. Hand each container whose owned fields changed to the RuntimeApplier,
//     exactly once; containers whose apply failed are retried every tick. After a
//     restart every checkpointed container is handed over once (QueueReapply).
//  2b. Rebuild (rebuild.h), only with a RuntimeView, and only from plugins whose report
//     succeeded; the runtime is listed after the plugins answered:
//     * a container some plugin allocated to but the checkpoint lacks is adopted into
//       the checkpoint (identity from the runtime) if the runtime lists the container;
//       if the runtime has no such pod (and the checkpoint neither), the pod is released
//       on the plugins (RemovePod), so no allocation outlives its container;
//     * a stored allocation of resource R that R's plugin no longer reports is replayed
//       (Allocate with the stored request and the previous allocation as an annotation)
//       once per container and resource per tick, for pods the runtime still lists; the
//       answer joins step 2's changes. So is the Allocate an admission skipped under the
//       "ignore" failure policy, once the skipped resource's plugin answers again.
//     Both re-check the checkpoint under the pod's admission lock, so they never race an
//     admission or a removal of the same pod.
//  5. Garbage collection: pods in the checkpoint (as it was before the runtime
//     was listed, so a pod admitted meanwhile is never collected) that the
//     runtime does not list get RemovePod on every live plugin, and leave the
//     checkpoint only when all of them succeeded.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include "qrm/admission/admission.h"
#include "qrm/reconcile/rebuild.h"
#include "qrm/reconcile/runtime.h"

namespace qrm::host {

struct ReconcileStats {
  int plugins_polled = 0;
  int plugin_errors = 0;
  int resources_changed = 0;
  int containers_applied = 0;
  int apply_failures = 0;
  int pods_collected = 0;
  int replays = 0;             // Allocate replayed to a plugin that lost an allocation
  int containers_adopted = 0;  // allocations the checkpoint lacked, taken in
  int orphans_released = 0;    // pods released because neither the host nor the runtime has them
};

class Reconciler {
 public:
  // `view` may be null (no garbage collection).
  Reconciler(PluginRegistry& registry, StateStore& state, Admission& admission,
             RuntimeApplier& applier, RuntimeView* view, boost::asio::thread_pool& workers,
             std::chrono::milliseconds rpc_timeout = std::chrono::milliseconds(10000));

  // One tick; also what the timer runs.
  StatusOr<ReconcileStats> RunOnce();

  // Queues every container of `pods` for step 4 of the next tick. The host calls it with
  // the checkpoint it loaded: a crash between step 3 (durable) and step 4 leaves a running
  // container behind its checkpointed fields, and no later diff would notice. A container
  // the runtime does not have (kNotFound) is dropped: its CreateContainer carries them.
  void QueueReapply(const PodResources& pods);

  // Runs RunOnce every `period` on `io` until Stop.
  void Start(boost::asio::io_context& io, std::chrono::milliseconds period);
  void Stop();

 private:
  void Schedule();
  void CollectGarbage(const PodResources& before, ReconcileStats& stats);
  // Step 2b (see the header comment); replayed answers are added to `changes`/`touched`.
  void Rebuild(const PodResources& before,
               const std::vector<std::shared_ptr<PluginEndpoint>>& plugins,
               const std::vector<StatusOr<pb::GetResourcesAllocationResponse>>& responses,
               std::vector<StateStore::ResourceChange>& changes,
               std::set<std::pair<std::string, std::string>>& touched, ReconcileStats& stats);
  void ReplayLost(const std::vector<LostAllocation>& lost, const std::set<std::string>& live,
                  const std::map<std::string, std::shared_ptr<PluginEndpoint>>& by_resource,
                  std::vector<StateStore::ResourceChange>& changes,
                  std::set<std::pair<std::string, std::string>>& touched, ReconcileStats& stats);
  void AdoptUnrecorded(const PodResources& before, const std::vector<UnrecordedContainer>& found,
                       const std::set<std::string>& live, ReconcileStats& stats);

  PluginRegistry& registry_;
  StateStore& state_;
  Admission& admission_;
  RuntimeApplier& applier_;
  RuntimeView* view_;
  boost::asio::thread_pool& workers_;
  const std::chrono::milliseconds rpc_timeout_;

  std::mutex mu_;  // one tick at a time
  // (pod uid, container) -> whether the runtime's kNotFound ends the retries (a re-apply).
  std::map<std::pair<std::string, std::string>, bool> pending_apply_;
  std::unique_ptr<boost::asio::steady_timer> timer_;
  std::chrono::milliseconds period_{3000};
  std::atomic<bool> stopped_{false};
  bool warned_no_container_listing_ = false;
  // Skipped resources whose sent Allocate answered no allocation: (pod uid, container,
  // resource), not asked again until a restart.
  std::set<std::tuple<std::string, std::string, std::string>> answered_empty_;
};

}  // namespace qrm::host
