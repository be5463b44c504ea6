// The scheduler's inter-pod filters for the drain planner: InterPodAffinity (the required
// pod affinity and anti-affinity terms, the incoming pod's and the existing pods') and
// PodTopologySpread (the DoNotSchedule constraints), as kube-scheduler's plugins of those
// names decide them. CA runs both in its drain simulation; a plan that ignored them would send
// a replica next to its anti-affine sibling, or pile a zone-spread Deployment into one zone,
// and the scheduler would leave the evicted pod Pending.
//
// InterPodCheck reads the simulation's PodLocations (pod_locations.h) for one incoming pod: it
// counts once what the pod's terms and constraints match (kept until a pod moves or the pod's
// fields change), then answers each node in constant time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/drain/pod_locations.h"
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

// The filters for one incoming pod.
class InterPodCheck {
 public:
  InterPodCheck(const ClusterSnapshot& snapshot, const PodLocations& locations);
  InterPodCheck(const InterPodCheck&) = delete;
  InterPodCheck& operator=(const InterPodCheck&) = delete;

  // Whether `pod` may go to `node` as far as pod (anti-)affinity and topology spread go.
  InterPodFailure Check(const DrainPod& pod, size_t node);

 private:
  // topologyKey -> value -> pods
  using Counts = std::map<std::string, std::map<std::string, int64_t>>;
  struct SpreadCounts {
    const TopologySpreadConstraint* constraint = nullptr;  // in counted_for_.spread
    std::vector<int64_t> per_domain;                       // by domain id (Domains): matching pods
    std::vector<char> present;  // by domain id: a node that counts has this value
    int64_t min = 0;            // the least over the domains
    bool self_match = false;    // the incoming pod matches its selector
  };

  void Recount(const DrainPod& pod);
  void CountAffinity(const DrainPod& pod);
  void CountAntiAffinity(const DrainPod& pod);
  void CountExistingAntiAffinity(const DrainPod& pod);
  void CountSpread(const DrainPod& pod);
  bool AffinitySatisfied(const DrainPod& pod, const DrainNode& node) const;
  bool SpreadSatisfied(size_t node) const;
  // The values of one label key as small ids: each node's (-1: no such label) and how many
  // there are. Node labels never change, so each key is numbered once.
  struct Domains {
    std::vector<int> of_node;
    size_t count = 0;
  };
  const Domains& DomainsOf(const std::string& key);
  // What decides whether a node counts for a constraint, removals aside: the keys every node
  // must carry and the pod's node selection and tolerations when the policies honour them.
  struct EligibilityKey {
    std::vector<std::string> keys;
    std::map<std::string, std::string> node_selector;
    std::vector<NodeSelectorTerm> required_affinity;
    std::vector<Toleration> tolerations;
    bool honor_taints = false;
    auto operator<=>(const EligibilityKey&) const = default;
  };
  // Per node, whether it counts for the constraint (before removals); cached per key, as the
  // pods of one application share it.
  const std::vector<char>& StaticEligibility(const DrainPod& pod,
                                             const TopologySpreadConstraint& c);

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
  std::map<std::string, Domains> domains_;
  std::map<EligibilityKey, std::vector<char>> eligibility_;
};

// Whether the term (of a pod in `owner_namespace`) selects `pod`: its namespace is among the
// term's namespaces and its labels match the term's selector.
bool TermSelects(const PodAffinityTerm& term, const std::string& owner_namespace,
                 const DrainPod& pod, const ClusterSnapshot& snapshot);

}  // namespace qrm::cluster::drain
