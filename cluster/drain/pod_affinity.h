// The scheduler's inter-pod filters for the drain planner: InterPodAffinity (the required
// pod affinity and anti-affinity terms, the incoming pod's and the existing pods') and
// PodTopologySpread (the DoNotSchedule constraints), as kube-scheduler's plugins of those
// names decide them. CA runs both in its drain simulation; a plan that ignored them would send
// a replica next to its anti-affine sibling, or pile a zone-spread Deployment into one zone,
// and the scheduler would leave the evicted pod Pending.
//
// PodLocations is the simulation's record of where the pods that count are: every bound pod
// that is not Succeeded or Failed, except the pods of nodes that leave the cluster (candidates
// and nodes being deleted; their pods move, and they are no topology domain any more).
// InterPodCheck reads it for one incoming pod: it counts once what the pod's terms and
// constraints match (cached until a pod moves), then answers each node in constant time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/drain/snapshot.h"

namespace qrm::cluster::drain {

// Why the inter-pod filters refuse a node; kFits when they do not.
enum class InterPodFailure {
  kFits,
  kPodAffinity,           // an affinity term has no matching pod in the node's domain
  kPodAntiAffinity,       // an anti-affinity term matches a pod in the node's domain
  kExistingAntiAffinity,  // a pod in the node's domain has an anti-affinity term matching it
  kTopologySpread,        // a DoNotSchedule constraint's skew, or the node lacks its key
};

class PodLocations {
 public:
  // The snapshot's bound pods, except Succeeded and Failed ones.
  explicit PodLocations(const ClusterSnapshot& snapshot);

  void Add(const DrainPod* pod, size_t node);
  // Returns the node the pod was on, or nullopt when it was not located.
  std::optional<size_t> Remove(const DrainPod* pod);
  // The node leaves the cluster: it is no domain any more (its pods are removed by the caller).
  void SetRemoved(size_t node, bool removed) {
    removed_[node] = removed ? 1 : 0;
    ++generation_;
  }
  bool removed(size_t node) const { return removed_[node] != 0; }

  // Bumped by every change, so that a check's counts know when they are stale.
  uint64_t generation() const { return generation_; }

  using Located = std::map<const DrainPod*, size_t>;  // pod -> node index
  // The located pods of one namespace (null when none).
  const Located* InNamespace(const std::string& ns) const;
  const std::map<std::string, Located>& by_namespace() const { return by_namespace_; }
  bool any_anti_affine() const { return !anti_affine_.empty(); }
  // The located pods with required anti-affinity terms that may select a pod of `ns`.
  void ForEachAntiAffine(const std::string& ns,
                         const std::function<void(const DrainPod&, size_t)>& visit) const;

 private:
  // The namespaces an anti-affinity pod is indexed under: its terms' own namespaces, or ""
  // for a term with a namespaceSelector (any namespace may match it).
  static std::vector<std::string> AntiAffinityKeys(const DrainPod& pod);

  std::map<std::string, Located> by_namespace_;
  std::map<std::string, Located> anti_affine_;
  std::vector<char> removed_;
  uint64_t generation_ = 0;
};

// The filters for one incoming pod.
class InterPodCheck {
 public:
  InterPodCheck(const ClusterSnapshot& snapshot, const PodLocations& locations);

  // Whether `pod` may go to `node` as far as pod (anti-)affinity and topology spread go.
  InterPodFailure Check(const DrainPod& pod, size_t node);

 private:
  // topologyKey -> value -> pods
  using Counts = std::map<std::string, std::map<std::string, int64_t>>;
  struct SpreadCounts {
    const TopologySpreadConstraint* constraint = nullptr;  // in counted_for_.spread
    std::map<std::string, int64_t> per_domain;             // value -> matching pods
    int64_t min = 0;                                       // the least over the domains
    bool self_match = false;                               // the incoming pod matches its selector
  };

  void Recount(const DrainPod& pod);
  void CountAffinity(const DrainPod& pod);
  void CountAntiAffinity(const DrainPod& pod);
  void CountExistingAntiAffinity(const DrainPod& pod);
  void CountSpread(const DrainPod& pod);
  bool AffinitySatisfied(const DrainPod& pod, const DrainNode& node) const;
  bool SpreadSatisfied(const DrainNode& node) const;

  // What the counts were made from: the fields of the incoming pod they read (compared, not
  // the pod's address, so that a pod changed or rebuilt at the same address is counted anew)
  // and the locations' generation.
  struct CountedFor {
    std::string namespace_;
    std::map<std::string, std::string> labels, node_selector;
    std::vector<NodeSelectorTerm> required_affinity;
    std::vector<Toleration> tolerations;
    std::vector<PodAffinityTerm> pod_affinity, pod_anti_affinity;
    std::vector<TopologySpreadConstraint> spread;
    uint64_t generation = 0;
    bool valid = false;

    bool Matches(const DrainPod& pod, uint64_t at) const;
    void Set(const DrainPod& pod, uint64_t at);
  };

  const ClusterSnapshot& snapshot_;
  const PodLocations& locations_;
  CountedFor counted_for_;
  Counts affinity_, anti_affinity_, existing_anti_affinity_;
  std::vector<SpreadCounts> spread_;
  std::vector<std::string> spread_keys_;  // every DoNotSchedule constraint's topologyKey
};

// Whether the term (of a pod in `owner_namespace`) selects `pod`: its namespace is among the
// term's namespaces and its labels match the term's selector.
bool TermSelects(const PodAffinityTerm& term, const std::string& owner_namespace,
                 const DrainPod& pod, const ClusterSnapshot& snapshot);

}  // namespace qrm::cluster::drain
