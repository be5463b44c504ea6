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
//     exactly once; containers whose apply failed are retried every tick.
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
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include "qrm/admission/admission.h"
#include "qrm/reconcile/runtime.h"

namespace qrm::host {

struct ReconcileStats {
  int plugins_polled = 0;
  int plugin_errors = 0;
  int resources_changed = 0;
  int containers_applied = 0;
  int apply_failures = 0;
  int pods_collected = 0;
};

class Reconciler {
 public:
  // `view` may be null (no garbage collection).
  Reconciler(PluginRegistry& registry, StateStore& state, Admission& admission,
             RuntimeApplier& applier, RuntimeView* view, boost::asio::thread_pool& workers,
             std::chrono::milliseconds rpc_timeout = std::chrono::milliseconds(10000));

  // One tick; also what the timer runs.
  StatusOr<ReconcileStats> RunOnce();

  // Runs RunOnce every `period` on `io` until Stop.
  void Start(boost::asio::io_context& io, std::chrono::milliseconds period);
  void Stop();

 private:
  void Schedule();
  void CollectGarbage(const PodResources& before, ReconcileStats& stats);

  PluginRegistry& registry_;
  StateStore& state_;
  Admission& admission_;
  RuntimeApplier& applier_;
  RuntimeView* view_;
  boost::asio::thread_pool& workers_;
  const std::chrono::milliseconds rpc_timeout_;

  std::mutex mu_;                                                // one tick at a time
  std::set<std::pair<std::string, std::string>> pending_apply_;  // (pod uid, container)
  std::unique_ptr<boost::asio::steady_timer> timer_;
  std::chrono::milliseconds period_{3000};
  std::atomic<bool> stopped_{false};
};

}  // namespace qrm::host
