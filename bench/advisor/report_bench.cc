// report_bench: the cost of the node report (docs/node-report.md).
//
//   REPORT <us> us   building one NodeMetric (status and the whole object's JSON) for a node
//                    with 200 pods of 2 containers each, every series holding 30 minutes of
//                    1 s samples, median
//
// The store is filled the way the agent fills it (one sample a second for the node, system and
// every container) with deterministic values; the build is what NodeReporter does at each
// check: the window averages, the 5/10/30 minute aggregates with their percentiles, the pods,
// and the encoding. A build that reports fewer pods or aggregates than the store holds fails
// the run, so the figure is never measured on a report that left things out.
//
// Flags: --only ID (repeatable), --pods N (200), --builds N (50 timed builds).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "advisor/report/node_metric_builder.h"
#include "bench/scale/bench_args.h"
#include "cluster/objects/node_metric_json.h"

namespace {

using namespace qrm::advisor;
using qrm::bench::BenchArgs;

constexpr int64_t kNow = 1'800'000'000;
constexpr int64_t kHistory = 1800;  // 30 minutes of samples

NodeReportInput Fill(MetricStore& store, int pods) {
  NodeReportInput in;
  in.node_name = "bench-node";
  in.now = kNow;
  in.node_cpu_series = "node/cpu";
  in.node_memory_series = "node/memory";
  in.system_cpu_series = "system/cpu";
  in.system_memory_series = "system/memory";
  in.cpu_capacity = 96;
  in.memory_capacity = 384.0 * (1 << 30);
  for (int p = 0; p < pods; ++p) {
    ReportPod pod;
    pod.name = "pod-" + std::to_string(p);
    pod.namespace_ = "ns-" + std::to_string(p % 13);
    pod.qos_level = p % 4 == 0 ? "reclaimed_cores" : "shared_cores";
    for (int c = 0; c < 2; ++c) {
      const std::string key = "uid-" + std::to_string(p) + "/c" + std::to_string(c);
      pod.cpu_series.push_back(key + "/cpu");
      pod.memory_series.push_back(key + "/memory");
    }
    in.pods.push_back(std::move(pod));
  }
  for (int64_t t = kNow - kHistory + 1; t <= kNow; ++t) {
    const double wave = static_cast<double>((t * 7919) % 100) / 100.0;
    store.Add("node/cpu", t, 40 + 20 * wave);
    store.Add("node/memory", t, (200 + 10 * wave) * (1 << 30));
    store.Add("system/cpu", t, 2 + wave);
    store.Add("system/memory", t, (8 + wave) * (1 << 30));
    for (const ReportPod& pod : in.pods) {
      for (const std::string& s : pod.cpu_series) store.Add(s, t, 0.1 + 0.2 * wave);
      for (const std::string& s : pod.memory_series) store.Add(s, t, (0.5 + wave) * (1 << 30));
    }
  }
  in.cpu.known = in.memory.known = true;
  in.cpu.peak = 70;
  in.memory.peak = 260.0 * (1 << 30);
  return in;
}

int RunReport(const BenchArgs& args) {
  StoreOptions options;
  options.gc_after_s = kHistory;
  MetricStore store(options);
  const NodeReportInput input = Fill(store, args.Int("pods"));
  std::vector<double> us;
  size_t bytes = 0;
  for (int i = 0; i < args.Int("builds"); ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto status = BuildNodeMetric(store, input, NodeReportOptions{});
    qrm::cluster::NodeMetric object;
    if (status) object.status = std::move(*status);
    const std::string json = qrm::cluster::EncodeNodeMetric(object);
    const auto end = std::chrono::steady_clock::now();
    us.push_back(std::chrono::duration<double, std::micro>(end - start).count());
    bytes = json.size();
    const auto& s = object.status;
    if (!s.node_metric || s.pods_metric.size() != input.pods.size() ||
        s.node_metric->aggregated_node_usages.size() != 3) {
      std::fprintf(stderr, "report_bench: the report left pods or aggregates out\n");
      return 1;
    }
  }
  std::fprintf(stderr,
               "# REPORT: %d pods x 2 containers, 30 min of 1 s samples: median %.0f us per "
               "NodeMetric (%zu bytes of JSON)\n",
               args.Int("pods"), qrm::bench::Median(us), bytes);
  std::printf("REPORT %.0f us\n", qrm::bench::Median(us));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs args({{"pods", 200}, {"builds", 50}});
  if (std::string error = args.Parse(argc, argv); !error.empty()) {
    std::fprintf(stderr, "report_bench: %s\n", error.c_str());
    return 2;
  }
  if (!args.Selected("REPORT")) return 0;
  return RunReport(args);
}
