#include "cluster/drain/snapshot.h"

#include <algorithm>
#include <charconv>

namespace qrm::cluster::drain {
namespace {

std::optional<int64_t> ToInt(const std::string& s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

bool Contains(const std::vector<std::string>& values, const std::string& v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

// Gt/Lt: the label and the single value must both be integers, else no match (upstream).
bool CompareInt(const SelectorRequirement& r, const std::string& label) {
  if (r.values.size() != 1) return false;
  std::optional<int64_t> have = ToInt(label), want = ToInt(r.values[0]);
  if (!have || !want) return false;
  return r.op == SelectorOp::kGt ? *have > *want : *have < *want;
}

}  // namespace

bool RequirementMatches(const SelectorRequirement& r,
                        const std::map<std::string, std::string>& labels) {
  auto it = labels.find(r.key);
  bool has = it != labels.end();
  switch (r.op) {
    case SelectorOp::kIn: return has && Contains(r.values, it->second);
    case SelectorOp::kNotIn: return !has || !Contains(r.values, it->second);
    case SelectorOp::kExists: return has;
    case SelectorOp::kDoesNotExist: return !has;
    case SelectorOp::kGt:
    case SelectorOp::kLt: return has && CompareInt(r, it->second);
    case SelectorOp::kUnknown: return false;
  }
  return false;
}

bool SelectorMatches(const LabelSelector& s, const std::map<std::string, std::string>& labels) {
  for (const auto& [key, value] : s.match_labels) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  return std::all_of(s.match_expressions.begin(), s.match_expressions.end(),
                     [&](const SelectorRequirement& r) { return RequirementMatches(r, labels); });
}

void ClusterSnapshot::Reindex() {
  node_index.clear();
  pod_index.clear();
  pods_by_node.clear();
  pdbs_by_ns.clear();
  for (size_t i = 0; i < nodes.size(); ++i) node_index.emplace(nodes[i].name, i);
  for (size_t i = 0; i < pods.size(); ++i) {
    pod_index.emplace(pods[i].Key(), i);
    if (!pods[i].node_name.empty()) pods_by_node[pods[i].node_name].push_back(i);
  }
  for (size_t i = 0; i < pdbs.size(); ++i) pdbs_by_ns[pdbs[i].namespace_].push_back(i);
}

const DrainNode* ClusterSnapshot::FindNode(const std::string& name) const {
  auto it = node_index.find(name);
  return it == node_index.end() ? nullptr : &nodes[it->second];
}

std::vector<const DrainPdb*> ClusterSnapshot::PdbsFor(const DrainPod& pod) const {
  std::vector<const DrainPdb*> out;
  auto it = pdbs_by_ns.find(pod.namespace_);
  if (it == pdbs_by_ns.end()) return out;
  for (size_t i : it->second)
    if (pdbs[i].Matches(pod)) out.push_back(&pdbs[i]);
  return out;
}

}  // namespace qrm::cluster::drain
