#include "advisor/report/node_metric_builder.h"

#include <algorithm>
#include <cmath>

namespace qrm::advisor {
namespace {

using cluster::AggregatedUsage;
using cluster::ResourceMap;

constexpr int64_t kNanosPerSecond = 1'000'000'000;

Quantity Cpu(double cores) {
  return Quantity::FromMilli(static_cast<int64_t>(std::max(cores, 0.0) * 1000),
                             QuantityFormat::kDecimalSI);
}
Quantity Memory(double bytes) {
  return Quantity::FromInt(static_cast<int64_t>(std::max(bytes, 0.0)), QuantityFormat::kBinarySI);
}

// The seconds of the window a query's samples stand for.
double Covered(const MetricStore& store, const Aggregate& a) {
  const RingOptions& ring = store.options().ring;
  return static_cast<double>(a.count) *
         static_cast<double>(a.from_buckets ? ring.bucket_s : ring.interval_s);
}

ResourceMap Usage(std::optional<double> cpu, std::optional<double> memory) {
  ResourceMap m;
  if (cpu) m.resources["cpu"] = Cpu(*cpu);
  if (memory) m.resources["memory"] = Memory(*memory);
  return m;
}

std::optional<double> Average(const MetricStore& store, const std::string& series, int64_t now,
                              int64_t window_s) {
  auto a = store.Query(series, now, window_s);
  if (!a) return std::nullopt;
  return a->avg;
}

// avg/p50/p90/p95/p99 of cpu and memory over `window_s`; nullopt in cold start.
std::optional<AggregatedUsage> Aggregated(const MetricStore& store, const std::string& cpu_series,
                                          const std::string& memory_series, int64_t now,
                                          int64_t window_s, double cold_start_ratio) {
  auto cpu = store.Query(cpu_series, now, window_s);
  auto memory = store.Query(memory_series, now, window_s);
  const double needed = cold_start_ratio * static_cast<double>(window_s);
  if (!cpu || !memory || Covered(store, *cpu) < needed || Covered(store, *memory) < needed) {
    return std::nullopt;
  }
  AggregatedUsage a;
  a.duration_ns = window_s * kNanosPerSecond;
  a.usage["avg"] = Usage(cpu->avg, memory->avg);
  a.usage["p50"] = Usage(cpu->p50, memory->p50);
  a.usage["p90"] = Usage(cpu->p90, memory->p90);
  a.usage["p95"] = Usage(cpu->p95, memory->p95);
  a.usage["p99"] = Usage(cpu->p99, memory->p99);
  return a;
}

std::vector<AggregatedUsage> AllAggregated(const MetricStore& store, const std::string& cpu,
                                           const std::string& memory, const NodeReportInput& in,
                                           const NodeReportOptions& options) {
  std::vector<AggregatedUsage> out;
  for (int64_t d : options.aggregated_durations_s) {
    if (auto a = Aggregated(store, cpu, memory, in.now, d, options.cold_start_ratio)) {
      out.push_back(std::move(*a));
    }
  }
  return out;
}

std::optional<double> SumOfAverages(const MetricStore& store,
                                    const std::vector<std::string>& series, int64_t now,
                                    int64_t window_s) {
  std::optional<double> sum;
  for (const std::string& s : series) {
    if (auto avg = Average(store, s, now, window_s)) sum = sum.value_or(0) + *avg;
  }
  return sum;
}

std::vector<cluster::PodMetricInfo> Pods(const MetricStore& store, const NodeReportInput& in,
                                         int64_t window_s) {
  std::vector<cluster::PodMetricInfo> pods;
  for (const ReportPod& p : in.pods) {
    auto cpu = SumOfAverages(store, p.cpu_series, in.now, window_s);
    auto memory = SumOfAverages(store, p.memory_series, in.now, window_s);
    if (!cpu && !memory) continue;  // nothing sampled yet: koordlet leaves such a pod out
    cluster::PodMetricInfo info;
    info.name = p.name;
    info.namespace_ = p.namespace_;
    info.pod_usage = Usage(cpu.value_or(0), memory.value_or(0));
    info.priority = KoordPriority(p.qos_level);
    info.qos = KoordQos(p.qos_level);
    pods.push_back(std::move(info));
  }
  std::sort(pods.begin(), pods.end(), [](const auto& a, const auto& b) {
    return a.namespace_ != b.namespace_ ? a.namespace_ < b.namespace_ : a.name < b.name;
  });
  return pods;
}

void AddPredictions(const NodeReportInput& in, cluster::NodeMetricStatus& status) {
  ResourceMap reclaimable, peak;
  if (in.cpu.known && in.cpu_capacity > 0) {
    reclaimable.resources["cpu"] = Cpu(std::max(in.cpu_capacity - in.cpu.peak, 0.0));
    peak.resources["cpu"] = Cpu(in.cpu.peak);
  }
  if (in.memory.known && in.memory_capacity > 0) {
    reclaimable.resources["memory"] = Memory(std::max(in.memory_capacity - in.memory.peak, 0.0));
    peak.resources["memory"] = Memory(in.memory.peak);
  }
  status.prod_reclaimable_metric = std::move(reclaimable);
  if (!peak.resources.empty()) status.prod_peak_metric = std::move(peak);
}

}  // namespace

std::string KoordPriority(const std::string& qos_level) {
  return qos_level == "reclaimed_cores" ? "koord-batch" : "koord-prod";
}

std::string KoordQos(const std::string& qos_level) {
  if (qos_level == "reclaimed_cores") return "BE";
  if (qos_level == "dedicated_cores") return "LSR";
  if (qos_level == "system_cores") return "SYSTEM";
  return "LS";
}

std::optional<cluster::NodeMetricStatus> BuildNodeMetric(const MetricStore& store,
                                                         const NodeReportInput& in,
                                                         const NodeReportOptions& options) {
  const int64_t window = options.aggregate_duration_s;
  auto node_cpu = Average(store, in.node_cpu_series, in.now, window);
  auto node_memory = Average(store, in.node_memory_series, in.now, window);
  if (!node_cpu || !node_memory) return std::nullopt;
  cluster::NodeMetricStatus status;
  status.update_time = in.now;
  cluster::NodeMetricInfo& info = status.node_metric.emplace();
  info.node_usage = Usage(node_cpu, node_memory);
  info.aggregated_node_usages =
      AllAggregated(store, in.node_cpu_series, in.node_memory_series, in, options);
  info.system_usage = Usage(Average(store, in.system_cpu_series, in.now, window),
                            Average(store, in.system_memory_series, in.now, window));
  info.aggregated_system_usages =
      AllAggregated(store, in.system_cpu_series, in.system_memory_series, in, options);
  status.pods_metric = Pods(store, in, window);
  AddPredictions(in, status);
  return status;
}

}  // namespace qrm::advisor
