// loadaware_bench: the load-aware decision core of the scheduler extender (cluster/loadaware).
//
//   P11 <ms> ms   Filter then Score of one pod over 5,000 nodes with 30 assigned pods each,
//                 median of the timed requests, one core (target <= 5 ms)
//
// The cluster is synthetic and deterministic: 96-core / 512 GiB nodes whose NodeMetrics were
// updated 20 s ago, node usage from a fixed linear congruential sequence (10-75 % cpu), every
// node with 30 assigned pods (a mix of prod and batch), of which the metric reports 28 and two
// were assigned after the update (so every node has a recent-pod delta). The default arguments
// filter a share of the nodes out; a run where no node or every node passes, or any node
// errs, fails, so the figure is never measured on a request that decided nothing.
//
// Flags: --only ID (repeatable), --nodes N (5000), --pods N (30 per node), --iterations N (200).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/scale/bench_args.h"
#include "cluster/loadaware/node_load_cache.h"

namespace {

using namespace qrm::cluster::loadaware;
using qrm::bench::BenchArgs;

constexpr int64_t kGi = int64_t{1} << 30;
const TimePoint kNow{std::chrono::seconds(1'767'225'600)};

struct Lcg {
  uint64_t state = 0x9e3779b97f4a7c15ULL;
  double Next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) / static_cast<double>(1ULL << 53);
  }
};

PodInput AssignedPod(const std::string& node, int i, Lcg& rng) {
  PodInput pod;
  pod.namespace_ = "ns-" + std::to_string(i % 7);
  pod.name = node + "-pod-" + std::to_string(i);
  pod.uid = pod.name + "-uid";
  pod.node_name = node;
  pod.phase = PodPhase::kRunning;
  const bool batch = i % 3 == 0;
  pod.priority = batch ? 5500 : 9500;
  const auto cpu = static_cast<int64_t>(500 + rng.Next() * 3500);
  const auto memory = static_cast<int64_t>((1 + rng.Next() * 7) * kGi);
  ContainerResources c;
  if (batch) {
    c.requests = {{"kubernetes.io/batch-cpu", cpu}, {"kubernetes.io/batch-memory", memory}};
  } else {
    c.requests = {{"cpu", cpu}, {"memory", memory}};
  }
  c.limits = c.requests;
  pod.containers.push_back(c);
  // The last two were assigned after the metric's update; the rest long before.
  pod.scheduled_time = i >= 28 ? kNow - std::chrono::seconds(5) : kNow - std::chrono::hours(2);
  return pod;
}

NodeMetricInput Metric(const std::string& node, int pods, Lcg& rng) {
  NodeMetricInput m;
  m.node_name = node;
  m.report_interval_seconds = 60;
  m.update_time = kNow - std::chrono::seconds(20);
  NodeMetricInfo info;
  info.node_usage = {{"cpu", static_cast<int64_t>((0.10 + 0.65 * rng.Next()) * 96000)},
                     {"memory", static_cast<int64_t>((0.2 + 0.6 * rng.Next()) * 512 * kGi)}};
  m.node_metric = info;
  for (int i = 0; i < pods && i < 28; ++i) {
    PodMetric p;
    p.namespace_ = "ns-" + std::to_string(i % 7);
    p.name = node + "-pod-" + std::to_string(i);
    p.priority = i % 3 == 0 ? "koord-batch" : "koord-prod";
    p.usage = {{"cpu", static_cast<int64_t>(rng.Next() * 2000)},
               {"memory", static_cast<int64_t>(rng.Next() * 4 * kGi)}};
    m.pods_metric.push_back(p);
  }
  return m;
}

std::unique_ptr<NodeLoadCache> Cluster(int nodes, int pods, std::vector<std::string>& names) {
  auto cache = NodeLoadCache::Create(DefaultArgs());
  if (!cache.ok()) return nullptr;
  Lcg rng;
  for (int n = 0; n < nodes; ++n) {
    const std::string name = "node-" + std::to_string(n);
    names.push_back(name);
    NodeInput node;
    node.name = name;
    node.allocatable = {{"cpu", 96000}, {"memory", 512 * kGi}, {"pods", 110}};
    (*cache)->UpsertNode(node);
    (*cache)->UpsertNodeMetric(Metric(name, pods, rng));
    for (int i = 0; i < pods; ++i) (*cache)->AssignPod(name, AssignedPod(name, i, rng), kNow);
  }
  return std::move(cache).value();
}

PodInput Incoming() {
  PodInput pod;
  pod.namespace_ = "default";
  pod.name = "incoming";
  pod.uid = "incoming-uid";
  pod.containers.push_back(ContainerResources{{{"cpu", 2000}, {"memory", 4 * kGi}},
                                              {{"cpu", 4000}, {"memory", 8 * kGi}}});
  return pod;
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "loadaware_bench: %s\n", what.c_str());
  return 1;
}

int RunP11(const BenchArgs& args) {
  std::vector<std::string> names;
  const auto cache = Cluster(args.Int("nodes"), args.Int("pods"), names);
  if (!cache) return Fail("the default arguments do not validate");
  const PodInput pod = Incoming();
  std::vector<double> ms;
  size_t passed = 0, best = 0;
  for (int i = 0; i < args.Int("iterations"); ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto filtered = cache->Filter(pod, names, kNow);
    auto scored = cache->Score(pod, names, kNow);
    const auto end = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    if (!filtered.ok() || !scored.ok()) return Fail("the incoming pod was refused");
    passed = best = 0;
    for (size_t n = 0; n < names.size(); ++n) {
      if ((*filtered)[n].is_error() || (*scored)[n].path != ScorePath::kScored) {
        return Fail("node " + names[n] + " was not decided: " + (*filtered)[n].Reason());
      }
      passed += (*filtered)[n].schedulable();
      if ((*scored)[n].score > (*scored)[best].score) best = n;
    }
    if (passed == 0 || passed == names.size()) {
      return Fail("the filter passed " + std::to_string(passed) + " of " +
                  std::to_string(names.size()) + " nodes: the figure would mean nothing");
    }
  }
  const double median = qrm::bench::Median(ms);
  std::fprintf(stderr,
               "# P11: %zu nodes x %d assigned pods, %d requests: %zu nodes pass the filter, "
               "best score %s\n",
               names.size(), args.Int("pods"), args.Int("iterations"), passed,
               names.empty() ? "-" : names[best].c_str());
  std::printf("P11 filter+prioritize 1 pod x %zu nodes: %.3f ms (target <= 5 ms)\n", names.size(),
              median);
  std::printf("P11 %.3f ms\n", median);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs args({{"nodes", 5000}, {"pods", 30}, {"iterations", 200}});
  if (std::string error = args.Parse(argc, argv); !error.empty()) {
    std::fprintf(stderr, "loadaware_bench: %s\n", error.c_str());
    return 2;
  }
  if (!args.Selected("P11")) return 0;
  return RunP11(args);
}
