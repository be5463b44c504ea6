#include "cluster/drain/pod_affinity.h"

#include <algorithm>
#include <limits>
#include <set>
#include <string_view>

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

// Calls visit(pod, node) for located pods of `namespaces` (nullopt: of every namespace) that
// may match `selector`.
void ForEachCandidate(const PodLocations& locations,
                      const std::optional<std::vector<std::string>>& namespaces,
                      const std::optional<LabelSelector>& selector,
                      const PodLocations::Visit& visit) {
  if (!namespaces) return locations.ForEachCandidate(nullptr, selector, visit);
  for (const std::string& ns : std::set<std::string>(namespaces->begin(), namespaces->end())) {
    locations.ForEachCandidate(&ns, selector, visit);
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

InterPodCheck::InterPodCheck(const ClusterSnapshot& snapshot, const PodLocations& locations)
    : snapshot_(snapshot), locations_(locations) {}

InterPodFailure InterPodCheck::Check(const DrainPod& pod, size_t node) {
  if (pod.pod_affinity.empty() && pod.pod_anti_affinity.empty() && pod.spread.empty() &&
      !locations_.any_anti_affine()) {
    return InterPodFailure::kFits;
  }
  if (!counted_for_.Matches(pod, locations_.generation())) Recount(pod);
  const DrainNode& n = snapshot_.nodes[node];
  if (!SpreadSatisfied(node)) return InterPodFailure::kTopologySpread;
  if (!AffinitySatisfied(pod, n)) return InterPodFailure::kPodAffinity;
  for (const PodAffinityTerm& term : pod.pod_anti_affinity) {
    const std::string* value = LabelOf(n, term.topology_key);
    if (value && CountAt(anti_affinity_, term.topology_key, *value) > 0) {
      return InterPodFailure::kPodAntiAffinity;
    }
  }
  for (const auto& [key, values] : existing_anti_affinity_) {
    const std::string* value = LabelOf(n, key);
    if (value && values.contains(*value)) return InterPodFailure::kExistingAntiAffinity;
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
  // A pod matching every term is in the namespaces of any one term and matches its selector:
  // scan the first term with namespaces of its own.
  const PodAffinityTerm* scan = &pod.pod_affinity.front();
  for (const PodAffinityTerm& term : pod.pod_affinity) {
    if (!term.namespace_selector) {
      scan = &term;
      break;
    }
  }
  ForEachCandidate(
      locations_, ScanNamespaces(*scan, pod.namespace_), scan->selector,
      [&](const DrainPod& other, size_t at) {
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
    ForEachCandidate(
        locations_, ScanNamespaces(term, pod.namespace_), term.selector,
        [&](const DrainPod& other, size_t at) {
          if (!TermSelects(term, pod.namespace_, other, snapshot_)) return;
          if (const std::string* value = LabelOf(snapshot_.nodes[at], term.topology_key)) {
            ++anti_affinity_[term.topology_key][*value];
          }
        });
  }
}

void InterPodCheck::CountExistingAntiAffinity(const DrainPod& pod) {
  locations_.ForEachAntiAffineCandidate(pod, [&](const DrainPod& other, size_t at) {
    for (const PodAffinityTerm& term : other.pod_anti_affinity) {
      if (!TermSelects(term, other.namespace_, pod, snapshot_)) continue;
      if (const std::string* value = LabelOf(snapshot_.nodes[at], term.topology_key)) {
        ++existing_anti_affinity_[term.topology_key][*value];
      }
    }
  });
}

const InterPodCheck::Domains& InterPodCheck::DomainsOf(const std::string& key) {
  auto [it, added] = domains_.try_emplace(key);
  if (!added) return it->second;
  std::map<std::string_view, int> ids;
  Domains& d = it->second;
  d.of_node.reserve(snapshot_.nodes.size());
  for (const DrainNode& node : snapshot_.nodes) {
    const std::string* value = LabelOf(node, key);
    d.of_node.push_back(value == nullptr ? -1 : ids.emplace(*value, ids.size()).first->second);
  }
  d.count = ids.size();
  return d;
}

// A node counts for a constraint when it carries every DoNotSchedule constraint's key and
// passes the constraint's node inclusion policies.
const std::vector<char>& InterPodCheck::StaticEligibility(const DrainPod& pod,
                                                          const TopologySpreadConstraint& c) {
  EligibilityKey key{spread_keys_, {}, {}, {}, c.honor_node_taints};
  if (c.honor_node_affinity) {
    key.node_selector = pod.node_selector;
    key.required_affinity = pod.required_affinity;
  }
  if (c.honor_node_taints) key.tolerations = pod.tolerations;
  auto [it, added] = eligibility_.try_emplace(std::move(key));
  if (!added) return it->second;
  std::vector<char>& eligible = it->second;
  eligible.assign(snapshot_.nodes.size(), 0);
  for (size_t i = 0; i < snapshot_.nodes.size(); ++i) {
    const DrainNode& n = snapshot_.nodes[i];
    const bool fits =
        std::all_of(spread_keys_.begin(), spread_keys_.end(),
                    [&](const std::string& k) { return DomainsOf(k).of_node[i] >= 0; }) &&
        (!c.honor_node_affinity || MatchesNodeSelection(pod, n)) &&
        (!c.honor_node_taints || ToleratesTaints(pod, n));
    eligible[i] = fits ? 1 : 0;
  }
  return eligible;
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
    const Domains& domains = DomainsOf(c.topology_key);
    counts.per_domain.assign(domains.count, 0);
    counts.present.assign(domains.count, 0);
    std::vector<char> eligible = StaticEligibility(pod, c);
    size_t present = 0;
    for (size_t i = 0; i < snapshot_.nodes.size(); ++i) {
      if (eligible[i] && locations_.removed(i)) eligible[i] = 0;
      if (!eligible[i] || counts.present[domains.of_node[i]]) continue;
      counts.present[domains.of_node[i]] = 1;
      ++present;
    }
    const std::optional<LabelSelector> selector = EffectiveSelector(c, pod);
    counts.self_match = selector && SelectorMatches(*selector, pod.labels);
    locations_.ForEachCandidate(&pod.namespace_, selector, [&](const DrainPod& other, size_t at) {
      if (!eligible[at] || locations_.Terminating(other)) return;
      if (SelectorMatches(*selector, other.labels)) ++counts.per_domain[domains.of_node[at]];
    });
    counts.min = 0;
    const bool too_few_domains = c.min_domains && static_cast<int64_t>(present) < *c.min_domains;
    if (too_few_domains || present == 0) continue;
    counts.min = std::numeric_limits<int64_t>::max();
    for (size_t d = 0; d < domains.count; ++d) {
      if (counts.present[d]) counts.min = std::min(counts.min, counts.per_domain[d]);
    }
  }
}

bool InterPodCheck::SpreadSatisfied(size_t node) const {
  for (const std::string& key : spread_keys_) {
    // the scheduler: missing required label
    if (LabelOf(snapshot_.nodes[node], key) == nullptr) return false;
  }
  for (const SpreadCounts& counts : spread_) {
    const int domain = domains_.at(counts.constraint->topology_key).of_node[node];
    const int64_t skew = counts.per_domain[domain] + (counts.self_match ? 1 : 0) - counts.min;
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
