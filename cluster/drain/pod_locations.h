// Where the pods that count for the inter-pod filters (pod_affinity.h) are during a drain
// simulation: every bound pod that is not Succeeded or Failed, except the pods of nodes that
// leave the cluster (candidates and nodes being deleted: their pods move, and they are no
// topology domain any more).
//
// Indexed so that one incoming pod's counts cost what its selectors can match, not the
// cluster: per namespace, by label (a selector's matchLabels narrows to one label's pods); and
// the pods with required anti-affinity terms by the namespace and a label their terms
// require, so that the pods whose anti-affinity may select an incoming pod are found from its
// own labels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cluster/drain/snapshot.h"

namespace qrm::cluster::drain {

class PodLocations {
 public:
  using Located = std::map<const DrainPod*, size_t>;  // pod -> node index
  using Visit = std::function<void(const DrainPod&, size_t)>;

  // The snapshot's bound pods, except Succeeded and Failed ones.
  explicit PodLocations(const ClusterSnapshot& snapshot);

  PodLocations(const PodLocations&) = delete;
  PodLocations& operator=(const PodLocations&) = delete;

  // `moved`: the simulation put it there (a replacement the scheduler places: it is not
  // terminating there, whatever the evicted pod's deletionTimestamp says).
  void Add(const DrainPod* pod, size_t node, bool moved = false);
  // Returns the node the pod was on, or nullopt when it was not located.
  std::optional<size_t> Remove(const DrainPod* pod);
  // The node leaves the cluster: it is no domain any more (its pods are removed by the caller).
  void SetRemoved(size_t node, bool removed);
  bool removed(size_t node) const { return removed_[node] != 0; }
  // Bumped by every change, so that counts made from the locations know when they are stale.
  uint64_t generation() const { return generation_; }

  // Calls visit(pod, node) for located pods of `ns` that may match `selector` (a superset of
  // those that do: the caller matches), or of every namespace when `ns` is null. An absent
  // selector matches no pod.
  void ForEachCandidate(const std::string* ns, const std::optional<LabelSelector>& selector,
                        const Visit& visit) const;
  // Calls visit(pod, node) once for each located pod with required anti-affinity terms that
  // may select `incoming` (a superset: the caller checks the terms).
  void ForEachAntiAffineCandidate(const DrainPod& incoming, const Visit& visit) const;
  bool any_anti_affine() const { return !anti_affine_.empty(); }
  bool Moved(const DrainPod& pod) const { return moved_.contains(&pod); }
  // Terminating where it is: a deletionTimestamp, and not moved by the simulation.
  bool Terminating(const DrainPod& pod) const {
    return pod.deletion_time.has_value() && !moved_.contains(&pod);
  }

 private:
  using Label = std::pair<std::string, std::string>;
  // label key -> value -> pods: looked up by a selector's or a pod's label without copying it
  using ByLabel = std::map<std::string, std::map<std::string, Located>>;
  struct NamespacePods {
    Located all;
    ByLabel by_label;
  };
  // Anti-affine pods under one namespace their terms may select ("": any, by selector).
  struct AntiAffinePods {
    ByLabel by_label;    // a label some term's matchLabels require
    Located unlabelled;  // a term without matchLabels
  };
  // Where an anti-affine pod is indexed: (namespace key, label or none) per term.
  static std::vector<std::pair<std::string, std::optional<Label>>> AntiAffinityKeys(
      const DrainPod& pod);
  void CandidatesIn(const NamespacePods& pods, const LabelSelector& selector,
                    const Visit& visit) const;

  std::map<std::string, NamespacePods> by_namespace_;
  std::map<std::string, AntiAffinePods> anti_affine_;
  std::set<const DrainPod*> moved_;
  std::vector<char> removed_;
  uint64_t generation_ = 0;
};

}  // namespace qrm::cluster::drain
