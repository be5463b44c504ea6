#include "cluster/loadaware/node_load_cache.h"

#include <utility>

#include "cluster/loadaware/assigned_pod.h"
#include "cluster/loadaware/metric_state.h"
#include "cluster/loadaware/node_decisions.h"
#include "cluster/loadaware/node_spec.h"

namespace qrm::cluster::loadaware {

StatusOr<std::unique_ptr<NodeLoadCache>> NodeLoadCache::Create(LoadAwareArgs args) {
  StatusOr<std::unique_ptr<const Config>> config = Config::Create(std::move(args));
  if (!config.ok()) return config.status();
  return std::unique_ptr<NodeLoadCache>(new NodeLoadCache(std::move(config).value()));
}

NodeLoad& NodeLoadCache::Entry(std::string_view name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) it = nodes_.emplace(std::string(name), NodeLoad()).first;
  return it->second;
}

const NodeLoad* NodeLoadCache::Find(std::string_view name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : &it->second;
}

void NodeLoadCache::DropIfUnused(std::string_view name) {
  auto it = nodes_.find(name);
  if (it != nodes_.end() && it->second.Unused()) nodes_.erase(it);
}

void NodeLoadCache::UpsertNode(const NodeInput& node) {
  NodeSpecState spec = BuildNodeSpec(*config_, node);
  MutexLock lock(mu_);
  Entry(node.name).SetSpec(std::move(spec), *config_);
}

void NodeLoadCache::RemoveNode(std::string_view name) {
  MutexLock lock(mu_);
  if (auto it = nodes_.find(name); it != nodes_.end()) {
    it->second.ClearSpec(*config_);
    DropIfUnused(name);
  }
}

void NodeLoadCache::UpsertNodeMetric(const NodeMetricInput& metric) {
  MetricState state = BuildMetricState(metric, config_->vectorizer());
  MutexLock lock(mu_);
  Entry(metric.node_name).SetMetric(std::move(state), *config_);
}

void NodeLoadCache::RemoveNodeMetric(std::string_view node_name) {
  MutexLock lock(mu_);
  if (auto it = nodes_.find(node_name); it != nodes_.end()) {
    it->second.ClearMetric(*config_);
    DropIfUnused(node_name);
  }
}

void NodeLoadCache::AssignLocked(std::string_view node_name, const PodInput& pod, TimePoint now) {
  if (node_name.empty() || !IsAssignable(pod)) return;
  Entry(node_name).PutPod(MakeAssignedPod(*config_, pod, now), *config_);
}

void NodeLoadCache::UnassignLocked(std::string_view node_name, const std::string& uid) {
  if (node_name.empty()) return;
  if (auto it = nodes_.find(node_name); it != nodes_.end()) {
    it->second.ErasePod(uid, *config_);
    DropIfUnused(node_name);
  }
}

void NodeLoadCache::AssignPod(std::string_view node_name, const PodInput& pod, TimePoint now) {
  MutexLock lock(mu_);
  AssignLocked(node_name, pod, now);
}

void NodeLoadCache::UnassignPod(std::string_view node_name, std::string_view uid) {
  MutexLock lock(mu_);
  UnassignLocked(node_name, std::string(uid));
}

void NodeLoadCache::UpdatePod(std::string_view old_node_name, const PodInput& pod, TimePoint now) {
  MutexLock lock(mu_);
  // A pod whose node changed would otherwise stay as ghost load on its old node.
  if (!old_node_name.empty() && old_node_name != pod.node_name) {
    UnassignLocked(old_node_name, pod.uid);
  }
  const NodeLoad* node = pod.node_name.empty() ? nullptr : Find(pod.node_name);
  const AssignedPod* cached = node ? node->FindPod(pod.uid) : nullptr;
  if (cached && IsTerminated(pod)) {
    UnassignLocked(pod.node_name, pod.uid);
  } else if (!cached || cached->fingerprint != SpecAndConditionsFingerprint(pod)) {
    AssignLocked(pod.node_name, pod, now);
  }
}

StatusOr<std::vector<FilterVerdict>> NodeLoadCache::Filter(const PodInput& pod,
                                                           const std::vector<std::string>& nodes,
                                                           TimePoint now) const {
  StatusOr<IncomingPod> incoming = PrepareIncoming(*config_, pod);
  if (!incoming.ok()) return incoming.status();
  std::vector<FilterVerdict> verdicts;
  verdicts.reserve(nodes.size());
  MutexLock lock(mu_);
  for (const std::string& name : nodes) {
    verdicts.push_back(FilterNode(*config_, *incoming, name, Find(name), now));
  }
  return verdicts;
}

StatusOr<std::vector<NodeScore>> NodeLoadCache::Score(const PodInput& pod,
                                                      const std::vector<std::string>& nodes,
                                                      TimePoint now) const {
  StatusOr<IncomingPod> incoming = PrepareIncoming(*config_, pod);
  if (!incoming.ok()) return incoming.status();
  std::vector<NodeScore> scores;
  scores.reserve(nodes.size());
  MutexLock lock(mu_);
  for (const std::string& name : nodes) {
    scores.push_back(ScoreNode(*config_, *incoming, name, Find(name), now));
  }
  return scores;
}

std::optional<NodeLoadParts> NodeLoadCache::Parts(std::string_view node_name) const {
  MutexLock lock(mu_);
  const NodeLoad* node = Find(node_name);
  if (!node) return std::nullopt;
  return node->Parts(*config_);
}

size_t NodeLoadCache::PodCount(std::string_view node_name) const {
  MutexLock lock(mu_);
  const NodeLoad* node = Find(node_name);
  return node ? node->pod_count() : 0;
}

}  // namespace qrm::cluster::loadaware
