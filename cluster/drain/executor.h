// Carries out a plan's drains against the API server, the way Cluster Autoscaler's scale-down
// actuator and `kubectl drain` do:
//  1. cordon the node: spec.unschedulable=true (`kubectl cordon`) and a NoSchedule taint
//     `taint_key`=drain-planner (CA's ToBeDeleted taint, so schedulers that ignore
//     unschedulable keep off too), existing taints kept. One JSON merge patch carrying the
//     node's resourceVersion: a node changed since it was read is answered 409 Conflict, read
//     again and patched again, so a taint another controller added meanwhile is never lost.
//  2. evict its pods through the Eviction API (kube::EvictPod), never by deleting them, so the
//     API server enforces every PodDisruptionBudget. 200/201: evicted; 404: the pod is gone
//     already (fine); 429: a budget forbids it now, tried again every `retry_interval` until
//     `eviction_timeout` has passed since the node's evictions began; a 5xx or transport error
//     is tried again the same way; any other answer (400, 403, ...) will not change and ends
//     that pod's tries at once.
//  3. wait until every evicted pod has left the node (pods_gone.h: a GET answers 404, or the
//     pod of that name is bound elsewhere), polling every `retry_interval` for up to
//     `termination_timeout`, as CA does before it deletes a drained node (its
//     --max-graceful-termination-sec plus 30 s). A zero timeout skips this step.
// A node is complete when every pod's eviction was accepted or the pod was gone, and (unless
// the wait is off, or in a dry run, where nothing is deleted) every pod has left it, so the
// node can be deleted. A node left incomplete stays cordoned: pods already evicted from it
// must not come back, and the next planning pass counts it as being drained.
// At most `parallelism` nodes are worked on at a time; the stop token ends every wait at once
// (nodes not started are reported so). A dry run writes nothing: the node is read (it must
// exist) but not cordoned, and evictions are sent with dryRun, so the API server still checks
// the budgets.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/kube/eviction.h"
#include "cluster/kube/kube_client.h"
#include "common/status.h"

namespace qrm::cluster::drain {

inline constexpr std::string_view kDrainTaintValue = "drain-planner";

struct DrainTarget {
  std::string node;
  std::vector<std::pair<std::string, std::string>> pods;  // namespace, name: to evict
};

struct ExecuteOptions {
  int parallelism = 1;  // nodes drained at once (CA's --max-drain-parallelism)
  std::chrono::milliseconds retry_interval{5000};  // between two tries of a blocked eviction
  // How long a node's evictions are tried before the node is given up as incomplete.
  std::chrono::milliseconds eviction_timeout{std::chrono::minutes(10)};
  // How long, once a node's evictions are all accepted, its pods are waited for to leave it;
  // zero: not waited for (the node is complete once evicted).
  std::chrono::milliseconds termination_timeout{std::chrono::seconds(600 + 30)};
  bool dry_run = false;
  std::string taint_key = "qrm.io/drain";
  std::optional<int64_t> grace_period_seconds;  // none: each pod's own
};

struct PodEvictionReport {
  std::string pod;  // namespace/name
  // Of the last try; kError with no attempt for a name that is not a valid one.
  kube::EvictionOutcome outcome = kube::EvictionOutcome::kError;
  int attempts = 0;
  std::string message;     // the server's message of the last try
  bool left_node = false;  // seen gone from the node (by the wait, or 404 at eviction)
};

struct NodeExecution {
  std::string node;
  bool cordoned = false;  // unschedulable and tainted now (never in a dry run)
  bool complete = false;  // every pod evicted or gone (and, when waited for, off the node)
  std::vector<PodEvictionReport> pods;
  std::string error;  // why the node is not complete; empty when it is
};

struct ExecuteReport {
  std::vector<NodeExecution> nodes;  // in the order of the targets

  bool complete() const;  // every node complete
};

// The merge patch that cordons the node `node_json` (a v1 Node as the API server returned
// it), with its resourceVersion as the precondition; nullopt when the node is unschedulable
// and has the NoSchedule taint `taint_key` already. kInvalidArgument for a node that is not
// a JSON object with metadata.resourceVersion, or whose spec.taints is not a list.
StatusOr<std::optional<std::string>> CordonPatch(std::string_view node_json,
                                                 std::string_view taint_key);

// Cordons the node (see above): read, patch, and on 409 read and patch again (up to 5 tries).
// In a dry run only reads it. Errors name the node and the request.
Status CordonNode(const kube::KubeClient& client, std::string_view node, std::string_view taint_key,
                  bool dry_run = false);

ExecuteReport ExecuteDrains(const kube::KubeClient& client, const std::vector<DrainTarget>& targets,
                            const ExecuteOptions& options, std::stop_token stop);

}  // namespace qrm::cluster::drain
