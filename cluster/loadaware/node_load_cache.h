// NodeLoadCache: the load-aware decision core of qrm's scheduler extender. It keeps, per node,
// what Koordinator's podAssignCache keeps (the NodeMetric and the pods assigned to the node)
// plus the Node object's allocatable and usage-threshold annotation, and answers Filter and
// Score for a pod over a list of nodes with LoadAwareScheduling's decisions.
//
// Cost: events (Node, NodeMetric, pod) recompute their node's sums, O(pods on the node); a
// request estimates the pod once and then does O(1) per node: one hash lookup, a few vector
// additions, and per resource one division (filter) or two (score).
//
// Thread safety: every method may be called from any thread. One mutex guards the nodes:
// events hold it while they update one node, requests while they walk their node list (about
// 1 ms for 5,000 nodes), so a request sees each node either before or after an event, and all
// nodes at one instant. The configuration is immutable and read without it.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cluster/loadaware/args.h"
#include "cluster/loadaware/config.h"
#include "cluster/loadaware/inputs.h"
#include "cluster/loadaware/node_load.h"
#include "cluster/loadaware/verdict.h"
#include "common/mutex.h"
#include "common/status.h"
#include "common/thread_annotations.h"

namespace qrm::cluster::loadaware {

class NodeLoadCache {
 public:
  // Validates the arguments (Validate); SetDefaults them first when they come from a
  // scheduler configuration.
  static StatusOr<std::unique_ptr<NodeLoadCache>> Create(LoadAwareArgs args);

  const Config& config() const { return *config_; }

  // Node objects, added or updated (the scheduler's snapshot of the node).
  void UpsertNode(const NodeInput& node) QRM_EXCLUDES(mu_);
  void RemoveNode(std::string_view name) QRM_EXCLUDES(mu_);

  // NodeMetric objects, added or updated; deleted.
  void UpsertNodeMetric(const NodeMetricInput& metric) QRM_EXCLUDES(mu_);
  void RemoveNodeMetric(std::string_view node_name) QRM_EXCLUDES(mu_);

  // podAssignCache.assign: Reserve, and pods the informer adds. Ignored for an empty node
  // name, a terminated pod (Succeeded or Failed) and a reservation's reserve pod. The pod is
  // (re)estimated; it counts as assigned at its PodScheduled time, else at `now`.
  void AssignPod(std::string_view node_name, const PodInput& pod, TimePoint now) QRM_EXCLUDES(mu_);
  // podAssignCache.unAssign: Unreserve, deleted pods, pods the scheduler forgets.
  void UnassignPod(std::string_view node_name, std::string_view uid) QRM_EXCLUDES(mu_);
  // podAssignCache.OnUpdate: a pod the informer updated, `old_node_name` being its previous
  // spec.nodeName. Moves it off its old node, assigns it when not cached, unassigns it when
  // terminated, and re-assigns it when its spec or conditions changed (the fields PodInput
  // carries of them; a change of labels or annotations alone is not picked up, as upstream).
  void UpdatePod(std::string_view old_node_name, const PodInput& pod, TimePoint now)
      QRM_EXCLUDES(mu_);

  // Filter and Score of `pod` on each of `nodes`, in order. The status is an error only when
  // the pod itself is bad; a bad node gets its own error verdict.
  StatusOr<std::vector<FilterVerdict>> Filter(const PodInput& pod,
                                              const std::vector<std::string>& nodes,
                                              TimePoint now) const QRM_EXCLUDES(mu_);
  StatusOr<std::vector<NodeScore>> Score(const PodInput& pod, const std::vector<std::string>& nodes,
                                         TimePoint now) const QRM_EXCLUDES(mu_);

  // The parts of a node's load (usage, deltas, the pods in them), for inspection.
  std::optional<NodeLoadParts> Parts(std::string_view node_name) const QRM_EXCLUDES(mu_);
  // How many pods the cache holds for the node.
  size_t PodCount(std::string_view node_name) const QRM_EXCLUDES(mu_);

 private:
  explicit NodeLoadCache(std::unique_ptr<const Config> config) : config_(std::move(config)) {}

  NodeLoad& Entry(std::string_view name) QRM_REQUIRES(mu_);
  const NodeLoad* Find(std::string_view name) const QRM_REQUIRES(mu_);
  void DropIfUnused(std::string_view name) QRM_REQUIRES(mu_);
  void AssignLocked(std::string_view node_name, const PodInput& pod, TimePoint now)
      QRM_REQUIRES(mu_);
  void UnassignLocked(std::string_view node_name, const std::string& uid) QRM_REQUIRES(mu_);

  // Looks names up without building a std::string per node of a request.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };

  const std::unique_ptr<const Config> config_;
  mutable Mutex mu_;
  std::unordered_map<std::string, NodeLoad, NameHash, std::equal_to<>> nodes_ QRM_GUARDED_BY(mu_);
};

}  // namespace qrm::cluster::loadaware
