// The cache: upstream pod_assign_cache_test.go (TestPodAssignCache_OnAdd, _OnUpdate,
// _OnUpdate_NodeNameChange, _OnDelete, TestNodeMetric) and helper_test.go
// (TestGetTargetAggregatedUsage), ported as data; then which assigned pods count as "recent",
// exactly at the boundaries of the rule.
#include <algorithm>
#include <string>
#include <vector>

#include "cluster/loadaware/metric_state.h"
#include "tests/unit/cluster/loadaware/loadaware_test_util.h"

namespace qrm::cluster::loadaware::testing {
namespace {

constexpr const char* kNode = "test-node";

// Upstream's cache tests: a vectorizer of cpu and memory, factors 100/100 unless said.
LoadAwareArgs Factors(int64_t cpu, int64_t memory) {
  LoadAwareArgs args;
  args.estimated_scaling_factors = {{"cpu", cpu}, {"memory", memory}};
  return args;
}

ResourceVector Vec(const NodeLoadCache& cache, int64_t milli_cpu, int64_t memory) {
  return cache.config().vectorizer().ToVec(CpuMem(milli_cpu, memory));
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

PodBuilder Running(std::string name, std::string uid) {
  return PodBuilder("default", std::move(name))
      .Uid(std::move(uid))
      .Node(kNode)
      .Phase(PodPhase::kRunning);
}

// The upstream metric of these tests: a name and nothing else (no update time).
NodeMetricInput BareMetric() {
  NodeMetricInput m;
  m.node_name = kNode;
  return m;
}

TEST_CASE("upstream TestPodAssignCache_OnAdd") {
  auto fresh = [] {
    auto cache = MakeCache(Factors(100, 100));
    cache->UpsertNodeMetric(BareMetric());
    return cache;
  };
  // "add pending pod" (no node) and "add terminated pod": not kept.
  auto cache = fresh();
  cache->AssignPod("", PodBuilder("default", "pending"), kNow);
  PodInput failed = Running("failed", "f");
  failed.phase = PodPhase::kFailed;
  cache->AssignPod(kNode, failed, kNow);
  // "add reserve pod - should be skipped".
  PodInput reserve = Running("test-reservation", "reserve-uid-123");
  reserve.reserve_pod = true;
  cache->AssignPod(kNode, reserve, kNow);
  CHECK(cache->PodCount(kNode) == 0);

  // "add scheduled running pod without resources": the defaults 250m / 200 MiB, all delta
  // (the metric reports no pods).
  cache = fresh();
  cache->AssignPod(kNode, Running("test", "123456789"), kNow);
  NodeLoadParts parts = PartsOf(*cache, kNode);
  CHECK(parts.node_delta == Vec(*cache, 250, 200 * kMi));
  CHECK(parts.node_estimated == Vec(*cache, 250, 200 * kMi));
  CHECK(parts.delta_pods == std::vector<std::string>{"default/test"});
  CHECK(parts.estimated_pods == std::vector<std::string>{"default/test"});

  // "add prod pod": 1 core and 4 GiB requested (Burstable, hence prod), factor 100%.
  cache = fresh();
  cache->AssignPod(kNode, PodBuilder("default", "test").Uid("1").Req(CpuMem(1000, 4 * kGi)), kNow);
  parts = PartsOf(*cache, kNode);
  CHECK(parts.node_delta == Vec(*cache, 1000, 4 * kGi));
  CHECK(parts.prod_delta == Vec(*cache, 1000, 4 * kGi));
  CHECK(parts.node_estimated == Vec(*cache, 1000, 4 * kGi));
  CHECK(parts.prod_delta_pods == std::vector<std::string>{"default/test"});

  // "add non prod pod": mid, mid-cpu 1k and mid-memory 4 GiB: node delta, no prod delta.
  cache = fresh();
  cache->AssignPod(
      kNode,
      PodBuilder("default", "test")
          .Uid("1")
          .Priority(7500)
          .Req({{"kubernetes.io/mid-cpu", 1000}, {"kubernetes.io/mid-memory", 4 * kGi}}),
      kNow);
  parts = PartsOf(*cache, kNode);
  CHECK(parts.node_delta == Vec(*cache, 1000, 4 * kGi));
  CHECK(parts.prod_delta == ResourceVector{});
}

TEST_CASE("upstream TestPodAssignCache_OnUpdate") {
  auto cache = MakeCache(Factors(100, 100));
  cache->UpsertNodeMetric(BareMetric());
  // "update pending pod": nothing.
  cache->UpdatePod("", PodBuilder("default", "pending"), kNow);
  CHECK(cache->PodCount(kNode) == 0);
  // "update scheduled running pod without resources": not cached yet -> assigned.
  cache->UpdatePod("", Running("test", "123456789"), kNow);
  CHECK(cache->PodCount(kNode) == 1);
  CHECK(PartsOf(*cache, kNode).node_estimated == Vec(*cache, 250, 200 * kMi));
  // "update pod resources, cache will be updated": 1 core and 4 GiB now.
  PodInput resized = Running("test", "123456789");
  resized.containers.push_back({CpuMem(1000, 4 * kGi), {}});
  cache->UpdatePod(kNode, resized, kNow);
  CHECK(PartsOf(*cache, kNode).node_estimated == Vec(*cache, 1000, 4 * kGi));
  CHECK(PartsOf(*cache, kNode).prod_delta == Vec(*cache, 1000, 4 * kGi));
  // "update terminated pod": removed.
  PodInput failed = resized;
  failed.phase = PodPhase::kFailed;
  cache->UpdatePod(kNode, failed, kNow);
  CHECK(cache->PodCount(kNode) == 0);
}

TEST_CASE("upstream OnUpdate metadata only changes are not picked up") {
  // "update pod metadata only, cache won't be updated": a new custom scaling factor (metadata)
  // would change the estimate if the pod were re-assigned; it is not.
  LoadAwareArgs args = Factors(100, 100);
  args.allow_customize_estimation = true;
  auto cache = MakeCache(args);
  cache->UpsertNodeMetric(BareMetric());
  PodInput pod = Running("test", "1");
  pod.containers.push_back({CpuMem(1000, kGi), {}});
  cache->AssignPod(kNode, pod, kNow);
  PodInput relabelled = pod;
  relabelled.custom_scaling_factors = std::map<std::string, int64_t>{{"cpu", 50}};
  cache->UpdatePod(kNode, relabelled, kNow);
  CHECK(PartsOf(*cache, kNode).node_estimated == Vec(*cache, 1000, kGi));
  // A spec change re-assigns it, and the new factor is read then: 500m.
  relabelled.containers[0].limits = CpuMem(1000, kGi);
  cache->UpdatePod(kNode, relabelled, kNow);
  CHECK(PartsOf(*cache, kNode).node_estimated == Vec(*cache, 500, kGi));
}

TEST_CASE("upstream OnUpdate conditions change the assignment time") {
  // "update pod conditions, cache will be updated": the pod's assignment time becomes its
  // PodScheduled time. Metric updated now, interval 60 s; the pod reports 1m of usage.
  auto cache = MakeCache(Factors(100, 100));
  cache->UpsertNodeMetric(MetricBuilder(kNode)
                              .Updated(kNow)
                              .NodeUsage(CpuMem(0, 0))
                              .Pod("default", "test", "", CpuMem(1, 0)));
  PodInput pod = Running("test", "1");
  pod.containers.push_back({CpuMem(1000, 0), {}});
  // Assigned (as far as the cache knows) 2 minutes before the update: not recent, no delta.
  cache->AssignPod(kNode, pod, kNow - 2min);
  CHECK(PartsOf(*cache, kNode).node_delta == ResourceVector{});
  // PodScheduled 30 s before the update: recent, delta 1000 - 1 = 999m, and the memory it
  // does not request estimates at the 200 MiB default, none of it reported.
  pod.scheduled_time = kNow - 30s;
  cache->UpdatePod(kNode, pod, kNow);
  CHECK(PartsOf(*cache, kNode).node_delta == Vec(*cache, 999, 200 * kMi));
}

TEST_CASE("upstream TestPodAssignCache_OnUpdate_NodeNameChange") {
  auto cache = MakeCache(Factors(100, 100));
  cache->UpsertNodeMetric(MetricBuilder("node-a").NoUpdateTime());
  cache->UpsertNodeMetric(MetricBuilder("node-b").NoUpdateTime());
  PodInput pod =
      PodBuilder("default", "test-pod").Uid("aaa").Node("node-a").Req(CpuMem(1000, 4 * kGi));
  cache->AssignPod("node-a", pod, kNow);
  pod.node_name = "node-b";
  cache->UpdatePod("node-a", pod, kNow);
  // The source node keeps no ghost load; the destination has the pod.
  CHECK(cache->PodCount("node-a") == 0);
  CHECK(PartsOf(*cache, "node-a").node_delta == ResourceVector{});
  CHECK(PartsOf(*cache, "node-a").node_estimated == ResourceVector{});
  CHECK(cache->PodCount("node-b") == 1);
  CHECK(PartsOf(*cache, "node-b").node_delta == Vec(*cache, 1000, 4 * kGi));
  CHECK(PartsOf(*cache, "node-b").prod_delta == Vec(*cache, 1000, 4 * kGi));
}

TEST_CASE("upstream TestPodAssignCache_OnDelete") {
  // Factors 50/50, metric without update time (every pod counts as recent). Reported:
  // prod-1 1 core / 6 GiB, prod-2 4 / 2, prod-3 (mid in the metric) 3 / 6, mid-1 1 / 6,
  // mid-2 4 / 2, mid-3 (prod in the metric) 3 / 6. Each pod asks 4 cores and 8 GiB
  // (estimate 2000m / 4 GiB).
  auto cache = MakeCache(Factors(50, 50));
  MetricBuilder m(kNode);
  m.NoUpdateTime().NodeUsage(CpuMem(Cores(70), 280 * kGi));
  m.Pod("default", "prod-0", "koord-prod", CpuMem(Cores(50), 200 * kGi));
  m.Pod("default", "prod-1", "koord-prod", CpuMem(Cores(1), 6 * kGi));
  m.Pod("default", "prod-2", "koord-prod", CpuMem(Cores(4), 2 * kGi));
  m.Pod("default", "prod-3", "koord-mid", CpuMem(Cores(3), 6 * kGi));
  m.Pod("default", "mid-1", "koord-mid", CpuMem(Cores(1), 6 * kGi));
  m.Pod("default", "mid-2", "koord-mid", CpuMem(Cores(4), 2 * kGi));
  m.Pod("default", "mid-3", "koord-prod", CpuMem(Cores(3), 6 * kGi));
  cache->UpsertNodeMetric(m);
  const ResourceList mid_req = {{"kubernetes.io/mid-cpu", 4000},
                                {"kubernetes.io/mid-memory", 8 * kGi}};
  int uid = 0;
  for (const char* name : {"prod-1", "prod-2", "prod-3"}) {
    cache->AssignPod(kNode, Running(name, std::to_string(++uid)).Req(CpuMem(Cores(4), 8 * kGi)),
                     kNow);
  }
  for (const char* name : {"mid-1", "mid-2", "mid-3"}) {
    cache->AssignPod(kNode, Running(name, std::to_string(++uid)).Priority(7500).Req(mid_req), kNow);
  }
  NodeLoadParts parts = PartsOf(*cache, kNode);
  // Prod usage: pods prod by priority and in the metric: prod-1 + prod-2 = 5 cores, 8 GiB.
  CHECK(parts.prod_usage == Vec(*cache, Cores(5), 8 * kGi));
  // Node delta: max(0, estimate - usage): prod-1 (1000, 0), prod-2 (0, 2 GiB), mid-1
  // (1000, 0), mid-2 (0, 2 GiB) -> 2 cores, 4 GiB.
  CHECK(parts.node_delta == Vec(*cache, Cores(2), 4 * kGi));
  // Prod delta: prod-1 (1000, 0), prod-2 (0, 2 GiB), prod-3 whole (2000, 4 GiB): the metric
  // does not call it prod -> 3 cores, 6 GiB.
  CHECK(parts.prod_delta == Vec(*cache, Cores(3), 6 * kGi));
  CHECK(parts.node_estimated == Vec(*cache, Cores(12), 24 * kGi));
  CHECK(Sorted(parts.delta_pods) == std::vector<std::string>{"default/mid-1", "default/mid-2",
                                                             "default/prod-1", "default/prod-2"});
  CHECK(Sorted(parts.prod_delta_pods) ==
        std::vector<std::string>{"default/prod-1", "default/prod-2", "default/prod-3"});
  CHECK(parts.estimated_pods.size() == 6);
  for (int i = 1; i <= 6; ++i) cache->UnassignPod(kNode, std::to_string(i));
  parts = PartsOf(*cache, kNode);
  CHECK(cache->PodCount(kNode) == 0);
  CHECK(parts.node_delta == ResourceVector{});
  CHECK(parts.prod_delta == ResourceVector{});
  CHECK(parts.node_estimated == ResourceVector{});
  CHECK(parts.delta_pods.empty());
}

TEST_CASE("upstream TestNodeMetric") {
  // "disable estimator": no scaling factors, so no estimates; prod usage is prod-1's reported
  // 50 cores and 200 GiB (mid-1 is not prod). A nil and a usage-less entry are skipped.
  auto cache = MakeCache(LoadAwareArgs{});
  MetricBuilder m(kNode);
  m.NoUpdateTime().NodeUsage(CpuMem(Cores(72), 280 * kGi));
  m.Pod("", "invalid", "", {});
  m.Pod("default", "prod-1", "koord-prod", CpuMem(Cores(50), 200 * kGi));
  m.Pod("default", "mid-1", "koord-mid", CpuMem(Cores(20), 75 * kGi));
  cache->AssignPod(kNode, Running("prod-1", "1").Req(CpuMem(Cores(40), 160 * kGi)), kNow);
  cache->AssignPod(
      kNode,
      Running("mid-1", "2")
          .Priority(7500)
          .Req({{"kubernetes.io/mid-cpu", 4000}, {"kubernetes.io/mid-memory", 8 * kGi}}),
      kNow);
  cache->UpsertNodeMetric(m);
  NodeLoadParts parts = PartsOf(*cache, kNode);
  CHECK(parts.prod_usage == Vec(*cache, Cores(50), 200 * kGi));
  CHECK(parts.node_estimated == ResourceVector{});
  // Deleting the pods and the metric forgets the node.
  cache->UnassignPod(kNode, "1");
  cache->UnassignPod(kNode, "2");
  cache->RemoveNodeMetric(kNode);
  CHECK_FALSE(cache->Parts(kNode).has_value());
}

TEST_CASE("upstream TestNodeMetric prod usage include sys and aggregated") {
  // "enable prod usage include sys": prod usage starts from the system usage (2 cores,
  // 4 GiB); interval 180 s; aggregated avg and p90 over 1m and 1h, the longest kept as
  // duration 0.
  LoadAwareArgs args = Factors(100, 100);
  args.prod_usage_include_sys = true;
  auto cache = MakeCache(args);
  MetricBuilder m(kNode);
  m.Updated(kNow).Interval(180).NodeUsage(CpuMem(2000, 4 * kGi)).SystemUsage(CpuMem(2000, 4 * kGi));
  m.Aggregated(60s, "avg", CpuMem(1000, 2 * kGi)).Aggregated(60s, "p90", CpuMem(2000, 4 * kGi));
  m.Aggregated(3600s, "avg", CpuMem(500, 1 * kGi)).Aggregated(3600s, "p90", CpuMem(1500, 3 * kGi));
  cache->UpsertNodeMetric(m);
  CHECK(PartsOf(*cache, kNode).prod_usage == Vec(*cache, 2000, 4 * kGi));
  const MetricState state = BuildMetricState(m, cache->config().vectorizer());
  CHECK(state.update_time == kNow);
  CHECK(state.report_interval == 180s);
  CHECK(*state.AggregatedTarget("avg", 0s) == Vec(*cache, 500, 1 * kGi));
  CHECK(*state.AggregatedTarget("p90", 0s) == Vec(*cache, 1500, 3 * kGi));
  CHECK(*state.AggregatedTarget("avg", 60s) == Vec(*cache, 1000, 2 * kGi));
  CHECK(*state.AggregatedTarget("p90", 3600s) == Vec(*cache, 1500, 3 * kGi));
  CHECK(state.aggregated.size() == 6);
}

TEST_CASE("upstream TestGetTargetAggregatedUsage") {
  const Vectorizer v({"cpu", "memory"});
  // "Valid AggregatedNodeUsages and aggregatedDuration is nil": p95 30 cores at 5m, 50 at
  // 10m, an empty list at 15m: duration 0 reads the longest non-empty, 10m.
  MetricBuilder m;
  m.NodeUsage(CpuMem(0, 0)).Aggregated(300s, "p95", {{"cpu", Cores(30)}});
  m.Aggregated(600s, "p95", {{"cpu", Cores(50)}});
  m.Aggregated(900s, "p95", {});
  MetricState state = BuildMetricState(m, v);
  CHECK(*state.AggregatedTarget("p95", 0s) == v.ToVec({{"cpu", Cores(50)}}));
  // "aggregatedDuration is not nil and matches a duration": 5m -> 30 cores.
  CHECK(*state.AggregatedTarget("p95", 300s) == v.ToVec({{"cpu", Cores(30)}}));
  // qrm: those lists have no memory, so the metric is refused when its usage is used.
  CHECK_FALSE(state.error.ok());
  // "NodeUsage contains a valid resource list and AggregatedNodeUsages is empty": duration 0
  // and only an empty p95 list: the node usage.
  MetricBuilder n;
  n.NodeUsage(CpuMem(Cores(30), 0)).Aggregated(300s, "p95", {});
  state = BuildMetricState(n, v);
  CHECK(*state.AggregatedTarget("p95", 0s) == v.ToVec(CpuMem(Cores(30), 0)));
  CHECK(state.AggregatedTarget("p95", 300s) == nullptr);
  CHECK(state.error.ok());
}

// ---- Recent pods, at the boundaries ---------------------------------------------------------
// Metric updated at U = now with a 60 s interval (unless said); one pod asking 1 core
// (estimate 1000m at 100%) reported at 100m. Recent: delta 900m. Not recent: delta 0.

int64_t DeltaFor(PodInput pod, std::optional<int64_t> interval = 60, bool reported = true,
                 LoadAwareArgs args = Factors(100, 100)) {
  auto cache = MakeCache(args);
  MetricBuilder m(kNode);
  m.Updated(kNow).Interval(interval).NodeUsage(CpuMem(0, 0));
  if (reported) m.Pod("default", "p", "", CpuMem(100, 0));
  cache->UpsertNodeMetric(m);
  pod.containers.push_back({CpuMem(1000, 0), {}});
  cache->AssignPod(kNode, pod, kNow + 1h);  // PodScheduled times below win over this
  return PartsOf(*cache, kNode).node_delta[*cache->config().vectorizer().IndexOf("cpu")];
}

PodInput ScheduledAt(TimePoint t) {
  return PodBuilder("default", "p").ScheduledAt(t);
}

TEST_CASE("a pod is recent when assigned strictly after updateTime - reportInterval") {
  CHECK(DeltaFor(ScheduledAt(kNow - 60s)) == 0);          // exactly U - 60 s: not after
  CHECK(DeltaFor(ScheduledAt(kNow - 60s + 1ns)) == 900);  // 1 ns later: recent
  CHECK(DeltaFor(ScheduledAt(kNow - 10min)) == 0);
  CHECK(DeltaFor(ScheduledAt(kNow + 5s)) == 900);  // assigned after the update
}

TEST_CASE("the report interval defaults to 60 s and may be 0") {
  CHECK(DeltaFor(ScheduledAt(kNow - 60s + 1ns), std::nullopt) == 900);
  CHECK(DeltaFor(ScheduledAt(kNow - 60s), std::nullopt) == 0);
  // Interval 0: only pods assigned after the update itself.
  CHECK(DeltaFor(ScheduledAt(kNow), 0) == 0);
  CHECK(DeltaFor(ScheduledAt(kNow + 1ns), 0) == 900);
}

TEST_CASE("a pod the metric does not report is recent however old") {
  CHECK(DeltaFor(ScheduledAt(kNow - 24h), 60, false) == 1000);  // the whole estimate
}

TEST_CASE("a pod is recent while its estimation deadline is strictly after updateTime") {
  LoadAwareArgs args = Factors(100, 100);
  args.estimated_seconds_after_pod_scheduled = 300;
  // Scheduled 10 min before the update: deadline U - 5 min: not recent.
  CHECK(DeltaFor(ScheduledAt(kNow - 10min), 60, true, args) == 0);
  // Scheduled exactly 5 min before: deadline == U: not after: not recent.
  CHECK(DeltaFor(ScheduledAt(kNow - 5min), 60, true, args) == 0);
  // 1 ns later: deadline U + 1 ns: recent.
  CHECK(DeltaFor(ScheduledAt(kNow - 5min + 1ns), 60, true, args) == 900);
  // Initialized wins over PodScheduled: initialized 10 s before U with 30 s -> U + 20 s.
  args.estimated_seconds_after_initialized = 30;
  PodInput pod = ScheduledAt(kNow - 10min);
  pod.initialized_time = kNow - 10s;
  CHECK(DeltaFor(pod, 60, true, args) == 900);
  // ... and, once initialized, the PodScheduled window no longer counts.
  pod.scheduled_time = kNow - 4min;   // would be recent by the 300 s window
  pod.initialized_time = kNow - 40s;  // initialized + 30 s = U - 10 s: not recent
  CHECK(DeltaFor(pod, 60, true, args) == 0);
}

TEST_CASE("recency is relative to the metric and changes only with a new metric") {
  auto cache = MakeCache(Defaulted([](LoadAwareArgs& a) {
    a.estimated_scaling_factors = {{"cpu", 100}, {"memory", 100}};
  }));
  cache->UpsertNode(Node96(kNode));
  cache->UpsertNodeMetric(MetricBuilder(kNode)
                              .Updated(kNow)
                              .NodeUsage(CpuMem(0, 0))
                              .Pod("default", "p", "", CpuMem(100, 0)));
  PodInput pod = ScheduledAt(kNow - 30s);
  pod.containers.push_back({CpuMem(1000, 0), {}});
  cache->AssignPod(kNode, pod, kNow);
  CHECK(PartsOf(*cache, kNode).node_delta[0] == 900);
  // Half an hour later with no new metric nothing is re-judged against "now": the metric has
  // expired, and that is what the filter says.
  CHECK(FilterOne(*cache, EmptyPod(), kNode, kNow + 30min).path == FilterPath::kMetricExpired);
  // The next report, 60 s after the first, no longer counts the pod.
  cache->UpsertNodeMetric(MetricBuilder(kNode)
                              .Updated(kNow + 60s)
                              .NodeUsage(CpuMem(0, 0))
                              .Pod("default", "p", "", CpuMem(100, 0)));
  CHECK(PartsOf(*cache, kNode).node_delta[0] == 0);
}

TEST_CASE("a metric without update time keeps the previous one") {
  // nodeInfo.updateTime is only overwritten by a metric that has one; with it the pod
  // scheduled 5 min before U is not recent. It is forgotten when the node empties.
  auto cache = MakeCache(Factors(100, 100));
  auto metric = [](bool with_time) {
    MetricBuilder m(kNode);
    m.NodeUsage(CpuMem(0, 0)).Pod("default", "p", "", CpuMem(100, 0));
    if (with_time) m.Updated(kNow);
    return m;
  };
  PodInput pod = ScheduledAt(kNow - 5min);
  pod.containers.push_back({CpuMem(1000, 0), {}});
  cache->UpsertNodeMetric(metric(true));
  cache->AssignPod(kNode, pod, kNow);
  cache->UpsertNodeMetric(metric(false));
  CHECK(PartsOf(*cache, kNode).node_delta[0] == 0);
  // Empty the node (no pod, no metric), then the same metric without time: every pod recent.
  cache->UnassignPod(kNode, pod.uid);
  cache->RemoveNodeMetric(kNode);
  cache->UpsertNodeMetric(metric(false));
  cache->AssignPod(kNode, pod, kNow);
  CHECK(PartsOf(*cache, kNode).node_delta[0] == 900);
}

TEST_CASE("a pod reported with an empty usage list counts as not reported") {
  auto cache = MakeCache(Factors(100, 100));
  cache->UpsertNodeMetric(
      MetricBuilder(kNode).Updated(kNow).NodeUsage(CpuMem(0, 0)).Pod("default", "p", "", {}));
  PodInput pod = ScheduledAt(kNow - 1h);
  pod.containers.push_back({CpuMem(1000, 0), {}});
  cache->AssignPod(kNode, pod, kNow);
  CHECK(PartsOf(*cache, kNode).node_delta[0] == 1000);
}

}  // namespace
}  // namespace qrm::cluster::loadaware::testing
