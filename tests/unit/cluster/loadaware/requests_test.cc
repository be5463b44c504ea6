// Requests over many nodes, the Reserve/Unreserve cycle, and the cache under concurrent events
// and requests.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/cluster/loadaware/loadaware_test_util.h"

namespace qrm::cluster::loadaware::testing {
namespace {

PodInput Pod16(std::string name) {
  return PodBuilder("default", std::move(name))
      .Container(CpuMem(Cores(16), 32 * kGi), CpuMem(Cores(16), 32 * kGi));
}

TEST_CASE("one request answers every node in order") {
  auto cache = MakeCache(Defaulted());
  for (const char* n : {"idle", "busy", "cold", "nometric"}) cache->UpsertNode(Node96(n));
  cache->UpsertNodeMetric(MetricBuilder("idle").Updated(kNow).NodeUsage(CpuMem(0, 0)));
  cache->UpsertNodeMetric(MetricBuilder("busy").Updated(kNow).NodeUsage(CpuMem(Cores(70), 0)));
  NodeMetricInput cold;  // koordlet started, nothing collected yet
  cold.node_name = "cold";
  cold.update_time = kNow;
  cache->UpsertNodeMetric(cold);
  const std::vector<std::string> nodes = {"idle", "busy", "cold", "nometric"};
  StatusOr<std::vector<FilterVerdict>> f = cache->Filter(Pod16("p"), nodes, kNow);
  REQUIRE(f.ok());
  REQUIRE(f->size() == 4);
  CHECK((*f)[0].path == FilterPath::kWithinThresholds);
  CHECK((*f)[1].path == FilterPath::kUsageExceeds);  // 83600 / 96000 -> 87 > 65
  CHECK((*f)[1].usage_percent == 87);
  CHECK((*f)[2].path == FilterPath::kColdStart);
  CHECK((*f)[3].path == FilterPath::kNoMetric);
  StatusOr<std::vector<NodeScore>> s = cache->Score(Pod16("p"), nodes, kNow);
  REQUIRE(s.ok());
  // idle 90; busy: cpu 83600 -> 12, memory 95 -> 53; cold and nometric 0.
  CHECK((*s)[0].score == 90);
  CHECK((*s)[1].score == 53);
  CHECK((*s)[2].path == ScorePath::kColdStart);
  CHECK((*s)[2].score == 0);
  CHECK((*s)[3].score == 0);
}

TEST_CASE("Reserve then Unreserve restores the node") {
  auto cache = MakeCache(Defaulted());
  cache->UpsertNode(Node96());
  cache->UpsertNodeMetric(MetricBuilder().Updated(kNow).NodeUsage(CpuMem(Cores(32), 10 * kGi)));
  // 72 alone (upstream "score load node"); with a reserved twin, 63 ("just assigned pod").
  CHECK(ScoreOne(*cache, Pod16("a")).score == 72);
  cache->AssignPod(kNodeName, Pod16("reserved"), kNow);
  CHECK(ScoreOne(*cache, Pod16("a")).score == 63);
  cache->UnassignPod(kNodeName, "default/reserved-uid");
  CHECK(ScoreOne(*cache, Pod16("a")).score == 72);
  CHECK(cache->PodCount(kNodeName) == 0);
}

TEST_CASE("a removed node or metric is answered as unknown or without metric") {
  auto cache = MakeCache(Defaulted());
  cache->UpsertNode(Node96());
  cache->UpsertNodeMetric(MetricBuilder().Updated(kNow).NodeUsage(CpuMem(Cores(70), 0)));
  CHECK(FilterOne(*cache, Pod16("p")).path == FilterPath::kUsageExceeds);
  cache->RemoveNodeMetric(kNodeName);
  CHECK(FilterOne(*cache, Pod16("p")).path == FilterPath::kNoMetric);
  cache->RemoveNode(kNodeName);
  CHECK(FilterOne(*cache, Pod16("p")).path == FilterPath::kError);
  CHECK_FALSE(cache->Parts(kNodeName).has_value());
}

TEST_CASE("concurrent events and requests see whole nodes") {
  // Writers flip each node's metric between two usages and assign and unassign a pod; readers
  // filter all nodes meanwhile. Every verdict must be one a whole node state gives (never an
  // error); the final state is what the last events say.
  auto cache = MakeCache(Defaulted());
  std::vector<std::string> nodes;
  for (int i = 0; i < 50; ++i) {
    nodes.push_back("node-" + std::to_string(i));
    cache->UpsertNode(Node96(nodes.back()));
  }
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0}, requests{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        StatusOr<std::vector<FilterVerdict>> f = cache->Filter(Pod16("p"), nodes, kNow);
        if (!f.ok() || f->size() != nodes.size()) {
          ++bad;
          continue;
        }
        for (const FilterVerdict& v : *f) {
          if (v.is_error()) ++bad;
        }
        ++requests;
      }
    });
  }
  for (int round = 0; round < 200; ++round) {
    for (const std::string& n : nodes) {
      const int64_t cores = round % 2 ? 70 : 10;
      cache->UpsertNodeMetric(MetricBuilder(n).Updated(kNow).NodeUsage(CpuMem(Cores(cores), 0)));
      cache->AssignPod(n, Pod16("p-" + n), kNow);
      if (round % 2 == 0) cache->UnassignPod(n, "default/p-" + n + "-uid");
    }
  }
  while (requests.load() < 10) std::this_thread::yield();
  stop = true;
  for (std::thread& t : readers) t.join();
  CHECK(bad.load() == 0);
  // Last round (199, odd): 70 cores and the pod assigned: 70000 + 13600 + 13600 -> 101 > 65.
  StatusOr<std::vector<FilterVerdict>> f = cache->Filter(Pod16("p"), nodes, kNow);
  REQUIRE(f.ok());
  for (const FilterVerdict& v : *f) CHECK(v.usage_percent == 101);
}

}  // namespace
}  // namespace qrm::cluster::loadaware::testing
