#include "cluster/drain/pod_locations.h"

#include <set>

namespace qrm::cluster::drain {
namespace {

using Located = PodLocations::Located;
using ByLabel = std::map<std::string, std::map<std::string, Located>>;

void EraseFrom(ByLabel& by_label, const std::string& key, const std::string& value,
               const DrainPod* pod) {
  auto k = by_label.find(key);
  if (k == by_label.end()) return;
  auto v = k->second.find(value);
  if (v == k->second.end()) return;
  v->second.erase(pod);
  if (v->second.empty()) k->second.erase(v);
  if (k->second.empty()) by_label.erase(k);
}

// The pods with label key=value, or null.
const Located* Find(const ByLabel& by_label, const std::string& key, const std::string& value) {
  auto k = by_label.find(key);
  if (k == by_label.end()) return nullptr;
  auto v = k->second.find(value);
  return v == k->second.end() ? nullptr : &v->second;
}

}  // namespace

PodLocations::PodLocations(const ClusterSnapshot& snapshot) : removed_(snapshot.nodes.size(), 0) {
  for (const DrainPod& pod : snapshot.pods) {
    auto node = snapshot.node_index.find(pod.node_name);
    if (node != snapshot.node_index.end() && !pod.Terminal()) Add(&pod, node->second);
  }
}

std::vector<std::pair<std::string, std::optional<PodLocations::Label>>>
PodLocations::AntiAffinityKeys(const DrainPod& pod) {
  std::set<std::pair<std::string, std::optional<Label>>> keys;
  for (const PodAffinityTerm& term : pod.pod_anti_affinity) {
    std::optional<Label> label;
    if (term.selector && !term.selector->match_labels.empty()) {
      label = *term.selector->match_labels.begin();  // every one must match: any one narrows
    }
    if (term.namespace_selector) {
      keys.emplace("", label);  // no namespace is called ""
    } else if (term.namespaces.empty()) {
      keys.emplace(pod.namespace_, label);
    } else {
      for (const std::string& ns : term.namespaces) keys.emplace(ns, label);
    }
  }
  return {keys.begin(), keys.end()};
}

void PodLocations::Add(const DrainPod* pod, size_t node, bool moved) {
  if (moved) moved_.insert(pod);
  NamespacePods& pods = by_namespace_[pod->namespace_];
  pods.all[pod] = node;
  for (const auto& [key, value] : pod->labels) pods.by_label[key][value][pod] = node;
  for (const auto& [ns, label] : AntiAffinityKeys(*pod)) {
    AntiAffinePods& anti = anti_affine_[ns];
    (label ? anti.by_label[label->first][label->second] : anti.unlabelled)[pod] = node;
  }
  ++generation_;
}

std::optional<size_t> PodLocations::Remove(const DrainPod* pod) {
  auto ns = by_namespace_.find(pod->namespace_);
  if (ns == by_namespace_.end()) return std::nullopt;
  auto it = ns->second.all.find(pod);
  if (it == ns->second.all.end()) return std::nullopt;
  const size_t node = it->second;
  ns->second.all.erase(it);
  moved_.erase(pod);
  for (const auto& [key, value] : pod->labels) EraseFrom(ns->second.by_label, key, value, pod);
  if (ns->second.all.empty()) by_namespace_.erase(ns);
  for (const auto& [key, label] : AntiAffinityKeys(*pod)) {
    auto anti = anti_affine_.find(key);
    if (anti == anti_affine_.end()) continue;
    if (label) {
      EraseFrom(anti->second.by_label, label->first, label->second, pod);
    } else {
      anti->second.unlabelled.erase(pod);
    }
    if (anti->second.by_label.empty() && anti->second.unlabelled.empty()) anti_affine_.erase(anti);
  }
  ++generation_;
  return node;
}

void PodLocations::SetRemoved(size_t node, bool removed) {
  removed_[node] = removed ? 1 : 0;
  ++generation_;
}

// The narrowest list that holds every match: the smallest of the matchLabels' pod lists.
void PodLocations::CandidatesIn(const NamespacePods& pods, const LabelSelector& selector,
                                const Visit& visit) const {
  const Located* narrowest = &pods.all;
  for (const auto& [key, value] : selector.match_labels) {
    const Located* with = Find(pods.by_label, key, value);
    if (with == nullptr) return;  // no pod has this label: nothing matches
    if (with->size() < narrowest->size()) narrowest = with;
  }
  for (const auto& [pod, node] : *narrowest) visit(*pod, node);
}

void PodLocations::ForEachCandidate(const std::string* ns,
                                    const std::optional<LabelSelector>& selector,
                                    const Visit& visit) const {
  if (!selector) return;
  if (ns == nullptr) {
    for (const auto& [name, pods] : by_namespace_) CandidatesIn(pods, *selector, visit);
    return;
  }
  auto pods = by_namespace_.find(*ns);
  if (pods != by_namespace_.end()) CandidatesIn(pods->second, *selector, visit);
}

void PodLocations::ForEachAntiAffineCandidate(const DrainPod& incoming, const Visit& visit) const {
  std::set<const DrainPod*> seen;  // a pod indexed under several keys is visited once
  auto visit_once = [&](const Located& located) {
    for (const auto& [pod, node] : located)
      if (seen.insert(pod).second) visit(*pod, node);
  };
  for (const std::string& key : {incoming.namespace_, std::string()}) {
    auto anti = anti_affine_.find(key);
    if (anti == anti_affine_.end()) continue;
    visit_once(anti->second.unlabelled);
    for (const auto& [label, value] : incoming.labels) {
      if (const Located* with = Find(anti->second.by_label, label, value)) visit_once(*with);
    }
  }
}

}  // namespace qrm::cluster::drain
