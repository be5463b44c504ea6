#include "cluster/loadaware/metric_state.h"

#include <fmt/format.h>

namespace qrm::cluster::loadaware {
namespace {

// Node usage lists must carry cpu and memory: a list without them reads as zero usage.
Status CheckUsageList(const ResourceList& list, const Vectorizer& v, const std::string& what) {
  if (Status s = v.CheckQuantities(list, what); !s.ok()) return s;
  for (std::string_view name : {kCpu, kMemory}) {
    if (!list.contains(name)) {
      return InvalidArgumentError(
          fmt::format("{} has no {} (it would read as an idle node)", what, name));
    }
  }
  return Status::Ok();
}

Status FirstError(const Status& current, const Status& next) {
  return current.ok() ? next : current;
}

void ReadAggregated(const NodeMetricInfo& info, const Vectorizer& v, MetricState& m) {
  std::map<std::string, std::chrono::seconds> longest;
  for (const AggregatedUsage& entry : info.aggregated_node_usages) {
    for (const auto& [type, list] : entry.usage) {
      if (list.empty()) continue;
      const std::string what =
          fmt::format("NodeMetric aggregatedNodeUsages {} over {}s", type, entry.duration.count());
      m.error = FirstError(m.error, CheckUsageList(list, v, what));
      m.aggregated[{type, entry.duration}] = v.ToVec(list);
      auto [it, inserted] = longest.try_emplace(type, std::chrono::seconds(0));
      if (entry.duration > it->second) it->second = entry.duration;
    }
  }
  for (const auto& [type, duration] : longest) {
    if (duration.count() > 0) {
      m.aggregated[{type, std::chrono::seconds(0)}] = m.aggregated[{type, duration}];
    }
  }
}

void ReadPods(const NodeMetricInput& metric, const Vectorizer& v, MetricState& m) {
  for (const PodMetric& pod : metric.pods_metric) {
    if (pod.usage.empty()) continue;
    const std::string key = PodKey(pod.namespace_, pod.name);
    m.error = FirstError(m.error, v.CheckQuantities(pod.usage, "NodeMetric pod " + key));
    MetricState::PodUsage& entry = m.pods[key];
    entry.usage = v.ToVec(pod.usage);
    entry.prod = entry.prod || pod.priority == "koord-prod";
  }
}

}  // namespace

const ResourceVector* MetricState::AggregatedTarget(const std::string& type,
                                                    std::chrono::seconds duration) const {
  auto it = aggregated.find({type, duration});
  if (it != aggregated.end()) return &it->second;
  return duration.count() == 0 ? &node_usage : nullptr;
}

MetricState BuildMetricState(const NodeMetricInput& metric, const Vectorizer& v) {
  MetricState m;
  m.update_time = metric.update_time;
  if (metric.report_interval_seconds) {
    const int64_t s = *metric.report_interval_seconds;
    if (s < 0 || s > kMaxReportIntervalSeconds) {
      m.error = InvalidArgumentError(fmt::format(
          "NodeMetric reportIntervalSeconds {} is outside [0, {}]", s, kMaxReportIntervalSeconds));
    } else {
      m.report_interval = std::chrono::seconds(s);
    }
  }
  if (metric.node_metric) {
    const NodeMetricInfo& info = *metric.node_metric;
    m.has_node_metric = true;
    m.error = FirstError(m.error, CheckUsageList(info.node_usage, v, "NodeMetric nodeUsage"));
    m.error = FirstError(m.error, v.CheckQuantities(info.system_usage, "NodeMetric systemUsage"));
    m.node_usage = v.ToVec(info.node_usage);
    m.system_usage = v.ToVec(info.system_usage);
    ReadAggregated(info, v, m);
  }
  ReadPods(metric, v, m);
  return m;
}

}  // namespace qrm::cluster::loadaware
