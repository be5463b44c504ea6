#include "cluster/drain/node_selection.h"

namespace qrm::cluster::drain {
namespace {

// The taint the scheduler treats spec.unschedulable as (v1.TaintNodeUnschedulable).
constexpr const char* kUnschedulableTaint = "node.kubernetes.io/unschedulable";

bool Tolerates(const Toleration& t, const std::string& key, const std::string& value,
               const std::string& effect) {
  if (!t.effect.empty() && t.effect != effect) return false;
  if (t.op == "Exists") return t.key.empty() || t.key == key;
  return t.key == key && t.value == value;  // "Equal", the default
}

bool ToleratesTaint(const DrainPod& pod, const std::string& key, const std::string& value,
                    const std::string& effect) {
  for (const Toleration& t : pod.tolerations)
    if (Tolerates(t, key, value, effect)) return true;
  return false;
}

}  // namespace

bool TermMatches(const NodeSelectorTerm& term, const std::map<std::string, std::string>& labels) {
  if (term.match_expressions.empty()) return false;  // an empty term matches no node
  for (const SelectorRequirement& r : term.match_expressions)
    if (!RequirementMatches(r, labels)) return false;
  return true;
}

bool ToleratesUnschedulable(const DrainPod& pod, const DrainNode& node) {
  return !node.unschedulable || ToleratesTaint(pod, kUnschedulableTaint, "", "NoSchedule");
}

bool ToleratesTaints(const DrainPod& pod, const DrainNode& node) {
  for (const Taint& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    if (!ToleratesTaint(pod, taint.key, taint.value, taint.effect)) return false;
  }
  return true;
}

bool ToleratesNode(const DrainPod& pod, const DrainNode& node) {
  return ToleratesUnschedulable(pod, node) && ToleratesTaints(pod, node);
}

bool MatchesNodeSelection(const DrainPod& pod, const DrainNode& node) {
  for (const auto& [key, value] : pod.node_selector) {
    auto label = node.labels.find(key);
    if (label == node.labels.end() || label->second != value) return false;
  }
  if (pod.required_affinity.empty()) return true;
  for (const NodeSelectorTerm& term : pod.required_affinity)
    if (TermMatches(term, node.labels)) return true;
  return false;
}

}  // namespace qrm::cluster::drain
