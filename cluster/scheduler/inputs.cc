#include "cluster/scheduler/inputs.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "cluster/objects/meta_time.h"
#include "cluster/scheduler/koord_annotations.h"
#include "common/protocol_keys.h"
#include "common/quote.h"

namespace qrm::cluster::scheduler {
namespace {

namespace la = loadaware;

// Go's zero time.Time (0001-01-01T00:00:00Z), which metav1.Time.IsZero reports as unset.
constexpr int64_t kGoZeroTimeUnix = -62'135'596'800;
// The seconds a TimePoint (int64 nanoseconds since 1970) holds, either side.
constexpr int64_t kMaxTimePointSeconds = std::numeric_limits<int64_t>::max() / kNanosPerSecond - 1;

// The nanoseconds of an RFC 3339 fraction (".5" is 500000000); Go keeps at most 9 digits.
int64_t FractionNanos(std::string_view text) {
  const size_t t = text.find('T');
  const size_t dot = t == std::string_view::npos ? t : text.find_first_of(".,", t);
  if (dot == std::string_view::npos) return 0;
  int64_t nanos = 0;
  int digits = 0;
  for (size_t i = dot + 1; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (digits == 9) continue;
    nanos = nanos * 10 + (text[i] - '0');
    ++digits;
  }
  for (; digits < 9; ++digits) nanos *= 10;
  return nanos;
}

std::optional<la::TimePoint> ToTimePoint(int64_t unix_seconds, int64_t nanos) {
  if (unix_seconds < -kMaxTimePointSeconds || unix_seconds > kMaxTimePointSeconds) {
    return std::nullopt;
  }
  return la::TimePoint(std::chrono::seconds(unix_seconds) + std::chrono::nanoseconds(nanos));
}

la::PodPhase PhaseFrom(std::string_view phase) {
  if (phase == "Running") return la::PodPhase::kRunning;
  if (phase == "Succeeded") return la::PodPhase::kSucceeded;
  if (phase == "Failed") return la::PodPhase::kFailed;
  if (phase == "Unknown") return la::PodPhase::kUnknown;
  // "Pending" and "" (a pod the API server has not given a phase yet) act alike: neither is
  // terminated, the only distinction the decision core draws.
  return la::PodPhase::kPending;
}

// podutil.GetPodCondition takes the first condition of the type; Koordinator then uses its
// lastTransitionTime when the status is True and the time is not zero.
std::optional<la::TimePoint> TrueConditionTime(const extender::Pod& pod, std::string_view type,
                                               Warnings* warnings) {
  for (const extender::PodCondition& c : pod.status.conditions) {
    if (c.type != type) continue;
    if (c.status != "True" || c.last_transition_time.empty()) return std::nullopt;
    StatusOr<int64_t> seconds = ParseTime(c.last_transition_time);
    if (seconds.ok() && *seconds == kGoZeroTimeUnix && FractionNanos(c.last_transition_time) == 0) {
      return std::nullopt;
    }
    StatusOr<la::TimePoint> t = ParseKubeTime(c.last_transition_time);
    if (!t.ok()) {
      if (warnings) {
        warnings->push_back(
            fmt::format("status.conditions {} lastTransitionTime: {}", type, t.status().message()));
      }
      return std::nullopt;
    }
    return *t;
  }
  return std::nullopt;
}

std::optional<std::string> Label(const extender::ObjectMeta& meta, std::string_view key) {
  auto it = meta.labels.find(std::string(key));
  if (it == meta.labels.end()) return std::nullopt;
  return it->second;
}

std::string Annotation(const extender::ObjectMeta& meta, std::string_view key) {
  auto it = meta.annotations.find(std::string(key));
  return it == meta.annotations.end() ? std::string() : it->second;
}

// Parses a JSON annotation with `parse`; an empty or absent one is absent, one that does not
// parse is absent and described in `warnings`.
template <typename T, typename Parse>
std::optional<T> JsonAnnotation(const extender::ObjectMeta& meta, std::string_view key,
                                Parse&& parse, Warnings* warnings) {
  const std::string text = Annotation(meta, key);
  if (text.empty()) return std::nullopt;
  StatusOr<std::optional<T>> value = parse(text);
  if (value.ok()) return *value;
  if (warnings) warnings->push_back(value.status().message());
  return std::nullopt;
}

la::ContainerResources ResourcesFrom(const extender::ResourceRequirements& r) {
  return la::ContainerResources{ToLoadAwareList(r.requests), ToLoadAwareList(r.limits)};
}

void ReadPodSpec(const extender::PodSpec& spec, la::PodInput& in) {
  in.node_name = spec.node_name;
  in.priority = spec.priority;
  for (const extender::Container& c : spec.containers) {
    in.containers.push_back(ResourcesFrom(c.resources));
  }
  for (const extender::Container& c : spec.init_containers) {
    in.init_containers.push_back(
        la::InitContainer{ResourcesFrom(c.resources), c.restart_policy == "Always"});
  }
  in.overhead = ToLoadAwareList(spec.overhead);
  if (spec.resources) in.pod_level_resources = ResourcesFrom(*spec.resources);
}

// Koordinator's metric aggregates without usage (a warming-up koordlet) are "not reported".
std::vector<la::AggregatedUsage> AggregatedFrom(const std::vector<AggregatedUsage>& entries) {
  std::vector<la::AggregatedUsage> out;
  for (const AggregatedUsage& entry : entries) {
    const std::chrono::seconds duration(entry.duration_ns / kNanosPerSecond);
    if (duration.count() <= 0) continue;  // Koordinator only ever picks durations above 0
    la::AggregatedUsage usage{duration, {}};
    for (const auto& [type, map] : entry.usage) {
      if (!map.resources.empty()) usage.usage.emplace(type, ToLoadAwareList(map.resources));
    }
    if (!usage.usage.empty()) out.push_back(std::move(usage));
  }
  return out;
}

}  // namespace

la::ResourceList ToLoadAwareList(const std::map<std::string, Quantity>& list) {
  la::ResourceList out;
  for (const auto& [name, quantity] : list) {
    out.emplace(name, name == la::kCpu ? quantity.MilliValue() : quantity.Value());
  }
  return out;
}

StatusOr<la::TimePoint> ParseKubeTime(std::string_view text) {
  StatusOr<int64_t> seconds = ParseTime(text);
  if (!seconds.ok()) return seconds.status();
  std::optional<la::TimePoint> t = ToTimePoint(*seconds, FractionNanos(text));
  if (!t) {
    return InvalidArgumentError(
        fmt::format("time {} is outside the years 1678-2262 this extender can hold", Quote(text)));
  }
  return *t;
}

la::PodInput PodInputFrom(const extender::Pod& pod, Warnings* warnings) {
  const extender::ObjectMeta& m = pod.metadata;
  la::PodInput in;
  in.namespace_ = m.namespace_name;
  in.name = m.name;
  in.uid = m.uid;
  in.priority_class_label = Label(m, kKoordPriorityClassLabel);
  in.qos_class_label = Label(m, kKoordQosClassLabel);
  in.owned_by_daemonset =
      std::any_of(m.owner_references.begin(), m.owner_references.end(),
                  [](const extender::OwnerReference& r) { return r.kind == "DaemonSet"; });
  in.reserve_pod = Annotation(m, kKoordReservePodAnnotation) == "true";
  in.custom_scaling_factors = JsonAnnotation<std::map<std::string, int64_t>>(
      m, kKoordScalingFactorsAnnotation, ParseScalingFactors, warnings);
  in.custom_seconds_after_pod_scheduled = Annotation(m, kKoordSecondsAfterPodScheduledAnnotation);
  in.custom_seconds_after_initialized = Annotation(m, kKoordSecondsAfterInitializedAnnotation);
  ReadPodSpec(pod.spec, in);
  in.phase = PhaseFrom(pod.status.phase);
  in.qos_class = pod.status.qos_class;
  in.scheduled_time = TrueConditionTime(pod, "PodScheduled", warnings);
  in.initialized_time = TrueConditionTime(pod, "Initialized", warnings);
  return in;
}

la::NodeInput NodeInputFrom(const extender::Node& node, Warnings* warnings) {
  la::NodeInput in;
  in.name = node.metadata.name;
  in.allocatable = ToLoadAwareList(node.status.allocatable);
  in.raw_allocatable = JsonAnnotation<la::ResourceList>(
      node.metadata, kKoordRawAllocatableAnnotation, ParseRawAllocatable, warnings);
  in.custom_usage_thresholds = JsonAnnotation<la::CustomUsageThresholds>(
      node.metadata, kKoordUsageThresholdsAnnotation, ParseUsageThresholds, warnings);
  return in;
}

StatusOr<la::NodeMetricInput> NodeMetricInputFrom(const NodeMetric& metric) {
  if (metric.metadata.name.empty()) {
    return InvalidArgumentError("NodeMetric metadata.name is empty: no node to apply it to");
  }
  la::NodeMetricInput in;
  in.node_name = metric.metadata.name;
  if (metric.collect_policy)
    in.report_interval_seconds = metric.collect_policy->report_interval_seconds;
  if (metric.status.update_time) {
    in.update_time = ToTimePoint(*metric.status.update_time, 0);
    if (!in.update_time) {
      return InvalidArgumentError(
          fmt::format("NodeMetric {} status.updateTime {} is outside the years 1678-2262",
                      in.node_name, *metric.status.update_time));
    }
  }
  if (metric.status.node_metric) {
    const NodeMetricInfo& info = *metric.status.node_metric;
    in.node_metric = la::NodeMetricInfo{ToLoadAwareList(info.node_usage.resources),
                                        ToLoadAwareList(info.system_usage.resources),
                                        AggregatedFrom(info.aggregated_node_usages)};
  }
  for (const PodMetricInfo& pod : metric.status.pods_metric) {
    in.pods_metric.push_back(la::PodMetric{pod.namespace_, pod.name, pod.priority,
                                           ToLoadAwareList(pod.pod_usage.resources)});
  }
  return in;
}

}  // namespace qrm::cluster::scheduler
