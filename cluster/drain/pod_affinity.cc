#include "cluster/drain/pod_affinity.h"

#include <algorithm>
#include <limits>
#include <set>

#include "cluster/drain/node_selection.h"

namespace qrm::cluster::drain {
namespace {

const std::map<std::string, std::string> kNoLabels;

// The namespaces whose pods a term may select, or nullopt for every namespace (a
// namespaceSelector: which namespaces it selects is decided pod by pod).
std::optional<std::vector<std::string>> ScanNamespaces(const PodAffinityTerm& term,
                                                       const std::string& owner_namespace) {
  if (term.namespace_selector) return std::nullopt;
  if (term.namespaces.empty()) return std::vector<std::string>{owner_namespace};
  return term.namespaces;
}

// Calls visit(pod, node) for the located pods of `namespaces` (nullopt: of every namespace).
template <typename Visit>
void ForEachLocated(const PodLocations& locations,
                    const std::optional<std::vector<std::string>>& namespaces, Visit visit) {
  if (!namespaces) {
    for (const auto& [ns, located] : locations.by_namespace())
      for (const auto& [pod, node] : located) visit(*pod, node);
    return;
  }
  for (const std::string& ns : std::set<std::string>(namespaces->begin(), namespaces->end())) {
    if (const PodLocations::Located* located = locations.InNamespace(ns)) {
      for (const auto& [pod, node] : *located) visit(*pod, node);
    }
  }
}

// The node's value of `key`, or null when it lacks the label.
const std::string* LabelOf(const DrainNode& node, const std::string& key) {
  auto it = node.labels.find(key);
  return it == node.labels.end() ? nullptr : &it->second;
}

int64_t CountAt(const std::map<std::string, std::map<std::string, int64_t>>& counts,
                const std::string& key, const std::string& value) {
  auto k = counts.find(key);
  if (k == counts.end()) return 0;
  auto v = k->second.find(value);
  return v == k->second.end() ? 0 : v->second;
}

bool SelectsAll(const std::vector<PodAffinityTerm>& terms, const std::string& owner_namespace,
                const DrainPod& pod, const ClusterSnapshot& snapshot) {
  return std::all_of(terms.begin(), terms.end(), [&](const PodAffinityTerm& t) {
    return TermSelects(t, owner_namespace, pod, snapshot);
  });
}

// The constraint's selector with matchLabelKeys applied: `key In (the pod's value)` for each
// key the incoming pod has, as the scheduler merges them. Null when it selects no pod.
std::optional<LabelSelector> EffectiveSelector(const TopologySpreadConstraint& c,
                                               const DrainPod& pod) {
  std::optional<LabelSelector> selector = c.selector;
  for (const std::string& key : c.match_label_keys) {
    auto label = pod.labels.find(key);
    if (label == pod.labels.end()) continue;
    if (!selector) selector.emplace();
    selector->match_expressions.push_back({key, SelectorOp::kIn, "In", {label->second}});
  }
  return selector;
}

}  // namespace

bool TermSelects(const PodAffinityTerm& term, const std::string& owner_namespace,
                 const DrainPod& pod, const ClusterSnapshot& snapshot) {
  if (!term.selector || !SelectorMatches(*term.selector, pod.labels)) return false;
  if (term.namespaces.empty() && !term.namespace_selector) {
    return pod.namespace_ == owner_namespace;
  }
  if (std::find(term.namespaces.begin(), term.namespaces.end(), pod.namespace_) !=
      term.namespaces.end()) {
    return true;
  }
  if (!term.namespace_selector) return false;
  auto ns = snapshot.namespaces.find(pod.namespace_);
  return SelectorMatches(*term.namespace_selector,
                         ns == snapshot.namespaces.end() ? kNoLabels : ns->second);
}

PodLocations::PodLocations(const ClusterSnapshot& snapshot) : removed_(snapshot.nodes.size(), 0) {
  for (const DrainPod& pod : snapshot.pods) {
    auto node = snapshot.node_index.find(pod.node_name);
    if (node != snapshot.node_index.end() && !pod.Terminal()) Add(&pod, node->second);
  }
}

std::vector<std::string> PodLocations::AntiAffinityKeys(const DrainPod& pod) {
  std::set<std::string> keys;
  for (const PodAffinityTerm& term : pod.pod_anti_affinity) {
    if (std::optional<std::vector<std::string>> ns = ScanNamespaces(term, pod.namespace_)) {
      keys.insert(ns->begin(), ns->end());
    } else {
      keys.insert("");  // no namespace is called ""
    }
  }
  return {keys.begin(), keys.end()};
}

void PodLocations::Add(const DrainPod* pod, size_t node) {
  by_namespace_[pod->namespace_][pod] = node;
  for (const std::string& key : AntiAffinityKeys(*pod)) anti_affine_[key][pod] = node;
  ++generation_;
}

std::optional<size_t> PodLocations::Remove(const DrainPod* pod) {
  auto ns = by_namespace_.find(pod->namespace_);
  if (ns == by_namespace_.end()) return std::nullopt;
  auto it = ns->second.find(pod);
  if (it == ns->second.end()) return std::nullopt;
  const size_t node = it->second;
  ns->second.erase(it);
  if (ns->second.empty()) by_namespace_.erase(ns);
  for (const std::string& key : AntiAffinityKeys(*pod)) {
    auto bucket = anti_affine_.find(key);
    if (bucket == anti_affine_.end()) continue;
    bucket->second.erase(pod);
    if (bucket->second.empty()) anti_affine_.erase(bucket);
  }
  ++generation_;
  return node;
}

const PodLocations::Located* PodLocations::InNamespace(const std::string& ns) const {
  auto it = by_namespace_.find(ns);
  return it == by_namespace_.end() ? nullptr : &it->second;
}

void PodLocations::ForEachAntiAffine(
    const std::string& ns, const std::function<void(const DrainPod&, size_t)>& visit) const {
  auto own = anti_affine_.find(ns);
  if (own != anti_affine_.end()) {
    for (const auto& [pod, node] : own->second) visit(*pod, node);
  }
  auto any = anti_affine_.find("");
  if (any == anti_affine_.end()) return;
  for (const auto& [pod, node] : any->second) {
    // Indexed under both: visited once.
    if (own == anti_affine_.end() || !own->second.count(pod)) visit(*pod, node);
  }
}

InterPodCheck::InterPodCheck(const ClusterSnapshot& snapshot, const PodLocations& locations)
    : snapshot_(snapshot), locations_(locations) {}

InterPodFailure InterPodCheck::Check(const DrainPod& pod, size_t node) {
  if (pod.pod_affinity.empty() && pod.pod_anti_affinity.empty() && pod.spread.empty() &&
      !locations_.any_anti_affine()) {
    return InterPodFailure::kFits;
  }
  if (!counted_for_.Matches(pod, locations_.generation())) Recount(pod);
  const DrainNode& n = snapshot_.nodes[node];
  if (!SpreadSatisfied(n)) return InterPodFailure::kTopologySpread;
  if (!AffinitySatisfied(pod, n)) return InterPodFailure::kPodAffinity;
  for (const PodAffinityTerm& term : pod.pod_anti_affinity) {
    const std::string* value = LabelOf(n, term.topology_key);
    if (value && CountAt(anti_affinity_, term.topology_key, *value) > 0) {
      return InterPodFailure::kPodAntiAffinity;
    }
  }
  for (const auto& [key, values] : existing_anti_affinity_) {
    const std::string* value = LabelOf(n, key);
    if (value && values.count(*value)) return InterPodFailure::kExistingAntiAffinity;
  }
  return InterPodFailure::kFits;
}

bool InterPodCheck::CountedFor::Matches(const DrainPod& pod, uint64_t at) const {
  return valid && generation == at && pod.namespace_ == namespace_ && pod.labels == labels &&
         pod.node_selector == node_selector && pod.required_affinity == required_affinity &&
         pod.tolerations == tolerations && pod.pod_affinity == pod_affinity &&
         pod.pod_anti_affinity == pod_anti_affinity && pod.spread == spread;
}

void InterPodCheck::CountedFor::Set(const DrainPod& pod, uint64_t at) {
  namespace_ = pod.namespace_;
  labels = pod.labels;
  node_selector = pod.node_selector;
  required_affinity = pod.required_affinity;
  tolerations = pod.tolerations;
  pod_affinity = pod.pod_affinity;
  pod_anti_affinity = pod.pod_anti_affinity;
  spread = pod.spread;
  generation = at;
  valid = true;
}

void InterPodCheck::Recount(const DrainPod& pod) {
  counted_for_.Set(pod, locations_.generation());
  affinity_.clear();
  anti_affinity_.clear();
  existing_anti_affinity_.clear();
  CountSpread(pod);
  CountAffinity(pod);
  CountAntiAffinity(pod);
  CountExistingAntiAffinity(pod);
}

// The scheduler counts an existing pod for the incoming pod's affinity only when it matches
// every term; it then counts in each term's domain of its node.
void InterPodCheck::CountAffinity(const DrainPod& pod) {
  if (pod.pod_affinity.empty()) return;
  // A pod matching every term is in the namespaces of any one term: scan the narrowest.
  std::optional<std::vector<std::string>> scan;
  for (const PodAffinityTerm& term : pod.pod_affinity) {
    if ((scan = ScanNamespaces(term, pod.namespace_))) break;
  }
  ForEachLocated(locations_, scan, [&](const DrainPod& other, size_t at) {
    if (!SelectsAll(pod.pod_affinity, pod.namespace_, other, snapshot_)) return;
    for (const PodAffinityTerm& term : pod.pod_affinity) {
      if (const std::string* value = LabelOf(snapshot_.nodes[at], term.topology_key)) {
        ++affinity_[term.topology_key][*value];
      }
    }
  });
}

void InterPodCheck::CountAntiAffinity(const DrainPod& pod) {
  for (const PodAffinityTerm& term : pod.pod_anti_affinity) {
    ForEachLocated(
        locations_, ScanNamespaces(term, pod.namespace_), [&](const DrainPod& other, size_t at) {
          if (!TermSelects(term, pod.namespace_, other, snapshot_)) return;
          if (const std::string* value = LabelOf(snapshot_.nodes[at], term.topology_key)) {
            ++anti_affinity_[term.topology_key][*value];
          }
        });
  }
}

void InterPodCheck::CountExistingAntiAffinity(const DrainPod& pod) {
  locations_.ForEachAntiAffine(pod.namespace_, [&](const DrainPod& other, size_t at) {
    for (const PodAffinityTerm& term : other.pod_anti_affinity) {
      if (!TermSelects(term, other.namespace_, pod, snapshot_)) continue;
      if (const std::string* value = LabelOf(snapshot_.nodes[at], term.topology_key)) {
        ++existing_anti_affinity_[term.topology_key][*value];
      }
    }
  });
}

// PodTopologySpread's PreFilter: per DoNotSchedule constraint, the matching pods of the pod's
// namespace in each domain of the nodes that count (every constraint's key present, and the
// node inclusion policies), and the least of them.
void InterPodCheck::CountSpread(const DrainPod& pod) {
  spread_.clear();
  spread_keys_.clear();
  for (const TopologySpreadConstraint& c : pod.spread) {
    if (c.when_unsatisfiable == "DoNotSchedule") spread_keys_.push_back(c.topology_key);
  }
  for (const TopologySpreadConstraint& c : counted_for_.spread) {
    if (c.when_unsatisfiable != "DoNotSchedule") continue;
    SpreadCounts& counts = spread_.emplace_back();
    counts.constraint = &c;
    std::vector<const std::string*> domain_of(snapshot_.nodes.size(), nullptr);
    for (size_t i = 0; i < snapshot_.nodes.size(); ++i) {
      const DrainNode& node = snapshot_.nodes[i];
      if (locations_.removed(i)) continue;
      if (std::any_of(spread_keys_.begin(), spread_keys_.end(),
                      [&](const std::string& key) { return LabelOf(node, key) == nullptr; })) {
        continue;
      }
      if (c.honor_node_affinity && !MatchesNodeSelection(pod, node)) continue;
      if (c.honor_node_taints && !ToleratesTaints(pod, node)) continue;
      domain_of[i] = LabelOf(node, c.topology_key);
      counts.per_domain.emplace(*domain_of[i], 0);
    }
    const std::optional<LabelSelector> selector = EffectiveSelector(c, pod);
    counts.self_match = selector && SelectorMatches(*selector, pod.labels);
    if (selector) {
      ForEachLocated(locations_, std::vector<std::string>{pod.namespace_},
                     [&](const DrainPod& other, size_t at) {
                       if (domain_of[at] == nullptr || other.deletion_time) return;
                       if (SelectorMatches(*selector, other.labels)) {
                         ++counts.per_domain[*domain_of[at]];
                       }
                     });
    }
    counts.min = 0;
    const bool too_few_domains =
        c.min_domains && static_cast<int64_t>(counts.per_domain.size()) < *c.min_domains;
    if (!too_few_domains && !counts.per_domain.empty()) {
      counts.min = std::numeric_limits<int64_t>::max();
      for (const auto& [value, n] : counts.per_domain) counts.min = std::min(counts.min, n);
    }
  }
}

bool InterPodCheck::SpreadSatisfied(const DrainNode& node) const {
  for (const std::string& key : spread_keys_) {
    if (LabelOf(node, key) == nullptr) return false;  // the scheduler: missing required label
  }
  for (const SpreadCounts& counts : spread_) {
    const std::string& value = *LabelOf(node, counts.constraint->topology_key);
    auto at = counts.per_domain.find(value);
    const int64_t here = at == counts.per_domain.end() ? 0 : at->second;
    const int64_t skew = here + (counts.self_match ? 1 : 0) - counts.min;
    if (skew > counts.constraint->max_skew) return false;
  }
  return true;
}

// The node must carry every term's key, and each term's domain there must hold a pod
// matching all terms; unless no such pod exists anywhere and the pod matches its own terms
// (the first pod of a group that attracts itself).
bool InterPodCheck::AffinitySatisfied(const DrainPod& pod, const DrainNode& node) const {
  bool pods_exist = true;
  for (const PodAffinityTerm& term : pod.pod_affinity) {
    const std::string* value = LabelOf(node, term.topology_key);
    if (value == nullptr) return false;
    if (CountAt(affinity_, term.topology_key, *value) <= 0) pods_exist = false;
  }
  if (pods_exist) return true;
  return affinity_.empty() && SelectsAll(pod.pod_affinity, pod.namespace_, pod, snapshot_);
}

}  // namespace qrm::cluster::drain
