#include "cluster/loadaware/node_load.h"

#include <utility>

#include <fmt/format.h>

namespace qrm::cluster::loadaware {

void NodeLoad::SetSpec(NodeSpecState spec, const Config& config) {
  spec_ = std::move(spec);
  Recompute(config);
}

void NodeLoad::ClearSpec(const Config& config) {
  spec_.reset();
  Recompute(config);
}

void NodeLoad::SetMetric(MetricState metric, const Config& config) {
  if (metric.update_time) update_time_ = metric.update_time;
  metric_ = std::move(metric);
  Recompute(config);
}

void NodeLoad::ClearMetric(const Config& config) {
  metric_.reset();
  Recompute(config);
}

void NodeLoad::PutPod(AssignedPod pod, const Config& config) {
  std::string uid = pod.uid;
  pods_.insert_or_assign(std::move(uid), std::move(pod));
  Recompute(config);
}

void NodeLoad::ErasePod(const std::string& uid, const Config& config) {
  if (pods_.erase(uid)) Recompute(config);
}

const AssignedPod* NodeLoad::FindPod(const std::string& uid) const {
  auto it = pods_.find(uid);
  return it == pods_.end() ? nullptr : &it->second;
}

const FilterProfile& NodeLoad::profile(const Config& config) const {
  if (spec_ && spec_->own_profile) return *spec_->own_profile;
  return config.profile();
}

bool NodeLoad::ShouldEstimate(const AssignedPod& pod, const ResourceVector* usage) const {
  if (!usage || !update_time_) return true;  // not reported yet (or a metric without a time)
  if (pod.timestamp > *update_time_ - metric_->report_interval) return true;
  return pod.deadline && *pod.deadline > *update_time_;
}

// nodeInfo.addPod: one pod's share of the parts.
void NodeLoad::AddPod(const AssignedPod& pod, NodeLoadParts& parts, bool names) const {
  auto reported = metric_->pods.find(pod.key);
  const ResourceVector* usage = reported == metric_->pods.end() ? nullptr : &reported->second.usage;
  // Prod usage counts a pod only when the pod and the metric both say prod: priorities can
  // change, and a metric may still list a pod that has gone.
  const bool active_prod = pod.prod && usage && reported->second.prod;
  if (active_prod) Add(parts.prod_usage, *usage);
  if (!pod.estimated) return;
  const ResourceVector& estimate = *pod.estimated;
  bool should = ShouldEstimate(pod, usage);
  if (should && AddDelta(parts.node_delta, estimate, usage) && names) {
    parts.delta_pods.push_back(pod.key);
  }
  Add(parts.node_estimated, estimate);
  if (names) parts.estimated_pods.push_back(pod.key);
  if (!pod.prod) return;
  if (!active_prod && usage) {
    usage = nullptr;  // its reported usage is not prod usage: estimate it whole
    should = true;
  }
  if (should && AddDelta(parts.prod_delta, estimate, usage) && names) {
    parts.prod_delta_pods.push_back(pod.key);
  }
}

NodeLoadParts NodeLoad::Parts(const Config& config) const {
  NodeLoadParts parts;
  if (!metric_) return parts;
  parts.node_usage = metric_->node_usage;
  if (config.args().prod_usage_include_sys) parts.prod_usage = metric_->system_usage;
  for (const auto& [uid, pod] : pods_) AddPod(pod, parts, true);
  return parts;
}

void NodeLoad::Recompute(const Config& config) {
  // The cache forgets an empty nodeInfo, and with it the update time it kept.
  if (!metric_ && pods_.empty()) update_time_.reset();
  plain_usage_ = prod_sum_ = filter_agg_usage_ = score_agg_usage_ = ResourceVector{};
  load_error_ = Status::Ok();
  if (!metric_) return;
  if (pods_.size() > kMaxPodsPerNode) {
    load_error_ = InvalidArgumentError(
        fmt::format("{} pods assigned, at most {} supported", pods_.size(), kMaxPodsPerNode));
    return;
  }
  load_error_ = metric_->error;
  for (const auto& [uid, pod] : pods_) {
    if (!load_error_.ok()) break;
    load_error_ = pod.error;
  }
  NodeLoadParts parts;
  if (config.args().prod_usage_include_sys) parts.prod_usage = metric_->system_usage;
  for (const auto& [uid, pod] : pods_) AddPod(pod, parts, false);

  plain_usage_ = metric_->node_usage;
  Add(plain_usage_, parts.node_delta);
  prod_sum_ = parts.prod_usage;
  Add(prod_sum_, parts.prod_delta);
  // GetNodeMetricAndEstimatedOfExisting: a target usage plus the delta, or, without the
  // target, every pod's whole estimate.
  const auto aggregated = [&](const std::string& type, std::chrono::seconds duration) {
    const ResourceVector* target = metric_->AggregatedTarget(type, duration);
    if (!target) return parts.node_estimated;
    ResourceVector sum = *target;
    Add(sum, parts.node_delta);
    return sum;
  };
  const FilterProfile& filter = profile(config);
  filter_agg_usage_ = filter.aggregated
                          ? aggregated(filter.aggregated->type, filter.aggregated->duration)
                          : plain_usage_;
  const std::optional<AggregatedArgs>& agg = config.args().aggregated;
  score_agg_usage_ = agg && !agg->score_aggregation_type.empty()
                         ? aggregated(agg->score_aggregation_type, agg->score_aggregated_duration)
                         : plain_usage_;
}

}  // namespace qrm::cluster::loadaware
