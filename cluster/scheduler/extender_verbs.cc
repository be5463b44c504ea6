// ExtenderService: the filter, prioritize and bind verbs.
#include <utility>

#include <fmt/format.h>

#include "cluster/scheduler/extender_service.h"
#include "common/log.h"

namespace qrm::cluster::scheduler {
namespace {

namespace la = loadaware;
using extender::ExtenderArgs;

constexpr const char* kComponent = "scheduler-extender";

std::string PodName(const la::PodInput& pod) {
  return la::PodKey(pod.namespace_, pod.name);
}

// Verdicts that never read the node's load: a bad NodeMetric does not change them.
bool IgnoresLoad(la::FilterPath path) {
  return path == la::FilterPath::kDaemonSetPod || path == la::FilterPath::kThresholdsOff;
}

la::FilterVerdict ErrorVerdict(const Status& error) {
  la::FilterVerdict v;
  v.path = la::FilterPath::kError;
  v.error = error;
  return v;
}

}  // namespace

std::vector<std::string> ExtenderService::RequestNodes(const ExtenderArgs& args) {
  if (!args.nodes) return args.node_names.value_or(std::vector<std::string>());
  std::vector<std::string> names;
  names.reserve(args.nodes->items.size());
  MutexLock lock(mu_);
  for (const extender::Node& node : args.nodes->items) {
    const std::string& name = names.emplace_back(node.metadata.name);
    auto it = nodes_.find(name);
    if (name.empty() ||
        (it != nodes_.end() &&
         (it->second.from_informer || (!node.json.empty() && it->second.json == node.json)))) {
      continue;
    }
    Warnings warnings;
    cache_->UpsertNode(NodeInputFrom(node, &warnings));
    LogWarnings("node " + name, warnings);
    nodes_[name] = NodeEntry{false, node.json};
  }
  return names;
}

std::vector<Status> ExtenderService::NodeProblems(const std::vector<std::string>& names) const {
  std::vector<Status> problems(names.size());
  MutexLock lock(mu_);
  for (size_t i = 0; i < names.size(); ++i) {
    if (!nodes_.contains(names[i])) {
      problems[i] = NotFoundError(std::string(kUnknownNodeReason));
    } else if (auto it = bad_metrics_.find(names[i]); it != bad_metrics_.end()) {
      problems[i] = it->second.WithContext(fmt::format("node {}", names[i]));
    }
  }
  return problems;
}

StatusOr<la::PodInput> ExtenderService::RequestPod(const ExtenderArgs& args) {
  if (!args.pod) return InvalidArgumentError("ExtenderArgs: Pod is null");
  if (!args.nodes && !args.node_names) {
    return InvalidArgumentError("ExtenderArgs: Nodes and NodeNames are both null");
  }
  Warnings warnings;
  la::PodInput pod = PodInputFrom(*args.pod, &warnings);
  LogWarnings("pod " + PodName(pod), warnings);
  if (pod.uid.empty()) pod.uid = PodName(pod);
  if (pod.node_name.empty()) RememberUnbound(pod);
  return pod;
}

extender::ExtenderFilterResult ExtenderService::Filter(const ExtenderArgs& args) {
  const metrics::Stopwatch watch;
  extender::ExtenderFilterResult result = FilterImpl(args);
  metrics_.Request("filter", result.error.empty() ? "ok" : "error", watch.Seconds());
  return result;
}

extender::ExtenderFilterResult ExtenderService::FilterImpl(const ExtenderArgs& args) {
  extender::ExtenderFilterResult result;
  StatusOr<la::PodInput> pod = RequestPod(args);
  if (!pod.ok()) {
    result.error = pod.status().message();
    return result;
  }
  const std::vector<std::string> names = RequestNodes(args);
  StatusOr<std::vector<la::FilterVerdict>> verdicts = cache_->Filter(*pod, names, Now());
  if (!verdicts.ok()) {
    metrics_.Error("pod");
    result.error = fmt::format("pod {}: {}", PodName(*pod), verdicts.status().message());
    return result;
  }
  const std::vector<Status> problems = NodeProblems(names);
  std::vector<bool> fits(names.size());
  extender::FailedNodesMap failed;
  std::map<std::string, double> refused;  // by reason, for the counters
  for (size_t i = 0; i < names.size(); ++i) {
    la::FilterVerdict v = (*verdicts)[i];
    if (!problems[i].ok() &&
        (problems[i].code() == StatusCode::kNotFound || !IgnoresLoad(v.path))) {
      v = ErrorVerdict(problems[i]);
    }
    fits[i] = v.schedulable();
    if (fits[i]) continue;
    const bool unknown = problems[i].code() == StatusCode::kNotFound;
    failed[names[i]] = unknown ? std::string(kUnknownNodeReason) : v.KoordinatorReason();
    refused[unknown ? "unknown-node" : std::string(la::FilterPathName(v.path))] += 1;
    if (v.is_error()) {
      input_log_.Log(spdlog::level::warn, "filter pod {}: node {} failed: {}", PodName(*pod),
                     names[i], v.Reason());
    } else {
      Logger(kComponent)->debug("filter pod {}: node {}: {}", PodName(*pod), names[i], v.Reason());
    }
  }
  for (const auto& [reason, count] : refused) metrics_.FilteredOut(reason, count);
  if (refused.contains("error")) metrics_.Error("node", refused["error"]);
  if (args.nodes) {
    result.nodes.emplace();
    for (size_t i = 0; i < names.size(); ++i) {
      if (fits[i]) result.nodes->items.push_back(args.nodes->items[i]);
    }
  }
  if (args.node_names) {
    result.node_names.emplace();
    for (size_t i = 0; i < names.size(); ++i) {
      if (fits[i]) result.node_names->push_back(names[i]);
    }
  }
  result.failed_nodes = std::move(failed);
  return result;
}

StatusOr<extender::HostPriorityList> ExtenderService::Prioritize(const ExtenderArgs& args) {
  const metrics::Stopwatch watch;
  StatusOr<extender::HostPriorityList> result = PrioritizeImpl(args);
  metrics_.Request("prioritize", result.ok() ? "ok" : "error", watch.Seconds());
  return result;
}

StatusOr<extender::HostPriorityList> ExtenderService::PrioritizeImpl(const ExtenderArgs& args) {
  StatusOr<la::PodInput> pod = RequestPod(args);
  if (!pod.ok()) return pod.status();
  const std::vector<std::string> names = RequestNodes(args);
  StatusOr<std::vector<la::NodeScore>> scores = cache_->Score(*pod, names, Now());
  if (!scores.ok()) {
    metrics_.Error("pod");
    return InvalidArgumentError(
        fmt::format("pod {}: {}", PodName(*pod), scores.status().message()));
  }
  const std::vector<Status> problems = NodeProblems(names);
  extender::HostPriorityList list;
  list.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    la::NodeScore s = (*scores)[i];
    if (!problems[i].ok() && s.path != la::ScorePath::kScoringOff) {
      s = la::NodeScore{0, la::ScorePath::kError, problems[i]};
    }
    if (s.path == la::ScorePath::kError) {
      metrics_.Error("node");
      input_log_.Log(spdlog::level::warn, "prioritize pod {}: node {} scored 0: {}", PodName(*pod),
                     names[i], s.error.message());
    }
    // kube-scheduler multiplies by the extender's weight (and by MaxNodeScore /
    // MaxExtenderPriority) itself.
    list.push_back({names[i], s.score * extender::kMaxExtenderPriority / kMaxLoadAwareScore});
  }
  return list;
}

StatusOr<BindPlan> ExtenderService::PlanBind(const extender::ExtenderBindingArgs& args) {
  if (args.pod_name.empty() || args.pod_namespace.empty() || args.node.empty()) {
    return InvalidArgumentError(fmt::format(
        "ExtenderBindingArgs: PodName \"{}\", PodNamespace \"{}\" and Node \"{}\" must all be set",
        args.pod_name, args.pod_namespace, args.node));
  }
  BindPlan plan = MakeBindPlan(args);
  const std::string key = la::PodKey(args.pod_namespace, args.pod_name);
  MutexLock lock(mu_);
  const std::string uid = args.pod_uid.empty() ? FindPodUid(key) : args.pod_uid;
  auto it = unbound_.find(uid);
  if (it == unbound_.end()) {
    Logger(kComponent)
        ->info("bind pod {} to {}: pod not seen in a request, not assumed", key, args.node);
    return plan;
  }
  la::PodInput pod = it->second;
  pod.node_name = args.node;
  PodEntry& entry = pods_[uid];
  if (!entry.node.empty() && entry.node != args.node) cache_->UnassignPod(entry.node, uid);
  cache_->AssignPod(args.node, pod, Now());
  entry = PodEntry{args.node, key, true};
  pod_uids_[key] = uid;
  plan.assumed = true;
  return plan;
}

void ExtenderService::FinishBind(const extender::ExtenderBindingArgs& args, const Status& result) {
  const std::string key = la::PodKey(args.pod_namespace, args.pod_name);
  MutexLock lock(mu_);
  const std::string uid = args.pod_uid.empty() ? FindPodUid(key) : args.pod_uid;
  if (result.ok()) {
    unbound_.erase(uid);
    return;
  }
  metrics_.Error("bind");
  Logger(kComponent)->warn("bind pod {} to {} failed: {}", key, args.node, result.message());
  auto it = pods_.find(uid);
  if (it != pods_.end() && it->second.assumed && it->second.node == args.node) {
    cache_->UnassignPod(args.node, uid);
    it->second.node.clear();
    it->second.assumed = false;
  }
}

}  // namespace qrm::cluster::scheduler
