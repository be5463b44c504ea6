// ExtenderService: construction, informer events and the node and pod tables.
#include "cluster/scheduler/extender_service.h"

#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "common/log.h"

namespace qrm::cluster::scheduler {
namespace {

namespace la = loadaware;

constexpr const char* kComponent = "scheduler-extender";

la::TimePoint SystemNow() {
  return std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
}

std::string PodKeyOf(const la::PodInput& pod) {
  return la::PodKey(pod.namespace_, pod.name);
}

}  // namespace

StatusOr<std::unique_ptr<ExtenderService>> ExtenderService::Create(la::LoadAwareArgs args,
                                                                   ExtenderServiceOptions options) {
  StatusOr<std::unique_ptr<la::NodeLoadCache>> cache = la::NodeLoadCache::Create(std::move(args));
  if (!cache.ok()) return cache.status().WithContext("LoadAwareSchedulingArgs");
  return std::unique_ptr<ExtenderService>(
      new ExtenderService(std::move(cache).value(), std::move(options)));
}

ExtenderService::ExtenderService(std::unique_ptr<la::NodeLoadCache> cache,
                                 ExtenderServiceOptions options)
    : cache_(std::move(cache)),
      clock_(options.clock ? std::move(options.clock) : SystemNow),
      metrics_(options.registry ? *options.registry : metrics::Default()),
      input_log_(Logger(kComponent), "bad input lines") {}

la::TimePoint ExtenderService::Now() const {
  return clock_();
}

void ExtenderService::LogWarnings(std::string_view object, const Warnings& warnings) {
  if (warnings.empty()) return;
  metrics_.Error("annotation", static_cast<double>(warnings.size()));
  for (const std::string& w : warnings) {
    input_log_.Log(spdlog::level::warn, "{}: {} (taken as absent)", object, w);
  }
}

void ExtenderService::UpsertNode(const extender::Node& node) {
  Warnings warnings;
  la::NodeInput in = NodeInputFrom(node, &warnings);
  LogWarnings("node " + in.name, warnings);
  if (in.name.empty()) {
    metrics_.Error("node");
    input_log_.Log(spdlog::level::warn, "a Node without metadata.name: ignored");
    return;
  }
  MutexLock lock(mu_);
  nodes_[in.name] = NodeEntry{true, {}};
  cache_->UpsertNode(in);
}

void ExtenderService::RemoveNode(std::string_view name) {
  MutexLock lock(mu_);
  nodes_.erase(std::string(name));
  cache_->RemoveNode(name);
}

void ExtenderService::UpsertNodeMetric(const NodeMetric& metric) {
  StatusOr<la::NodeMetricInput> in = NodeMetricInputFrom(metric);
  if (!in.ok()) {
    metrics_.Error("node-metric");
    input_log_.Log(spdlog::level::warn, "{}", in.status().message());
    if (metric.metadata.name.empty()) return;
    // The node must not keep being judged on an older, good metric, nor look unreported.
    MutexLock lock(mu_);
    bad_metrics_[metric.metadata.name] = in.status();
    cache_->RemoveNodeMetric(metric.metadata.name);
    return;
  }
  MutexLock lock(mu_);
  bad_metrics_.erase(in->node_name);
  cache_->UpsertNodeMetric(*in);
}

void ExtenderService::RemoveNodeMetric(std::string_view node_name) {
  MutexLock lock(mu_);
  bad_metrics_.erase(std::string(node_name));
  cache_->RemoveNodeMetric(node_name);
}

void ExtenderService::UpsertPod(const extender::Pod& pod) {
  Warnings warnings;
  la::PodInput in = PodInputFrom(pod, &warnings);
  const std::string key = PodKeyOf(in);
  LogWarnings("pod " + key, warnings);
  if (in.uid.empty()) in.uid = key;
  const la::TimePoint now = Now();
  MutexLock lock(mu_);
  PodEntry& entry = pods_[in.uid];
  entry.key = key;
  pod_uids_[key] = in.uid;
  if (in.node_name.empty()) {
    // An event older than our bind: keep the assumption until the informer shows the node.
    if (!entry.assumed) {
      cache_->UpdatePod(entry.node, in, now);
      entry.node.clear();
    }
    return;
  }
  cache_->UpdatePod(entry.node, in, now);
  entry.node = in.node_name;
  entry.assumed = false;
  unbound_.erase(in.uid);
}

std::string ExtenderService::FindPodUid(std::string_view pod) const {
  std::string id(pod);
  if (pods_.contains(id) || unbound_.contains(id)) return id;
  auto it = pod_uids_.find(id);
  return it == pod_uids_.end() ? std::string() : it->second;
}

void ExtenderService::ErasePod(const std::string& uid) {
  if (auto it = pods_.find(uid); it != pods_.end()) {
    pod_uids_.erase(it->second.key);
    pods_.erase(it);
  }
  unbound_.erase(uid);
}

void ExtenderService::RemovePod(std::string_view pod) {
  MutexLock lock(mu_);
  const std::string uid = FindPodUid(pod);
  if (uid.empty()) return;
  if (auto it = pods_.find(uid); it != pods_.end() && !it->second.node.empty()) {
    cache_->UnassignPod(it->second.node, uid);
  }
  ErasePod(uid);
}

void ExtenderService::RememberUnbound(const la::PodInput& pod) {
  MutexLock lock(mu_);
  auto [it, inserted] = unbound_.insert_or_assign(pod.uid, pod);
  if (!inserted) return;
  unbound_order_.push_back(pod.uid);
  // The order may name pods erased since (bound or deleted); popping them only trims it.
  while (unbound_order_.size() > kMaxUnboundPods) {
    if (unbound_order_.front() != pod.uid) unbound_.erase(unbound_order_.front());
    unbound_order_.pop_front();
  }
}

size_t ExtenderService::NodeCount() const {
  MutexLock lock(mu_);
  return nodes_.size();
}

size_t ExtenderService::PodCount() const {
  MutexLock lock(mu_);
  return pods_.size();
}

}  // namespace qrm::cluster::scheduler
