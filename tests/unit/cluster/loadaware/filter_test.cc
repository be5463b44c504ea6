// The filter: the cases of upstream load_aware_test.go (TestFilterExpiredNodeMetric,
// TestEnableScheduleWhenNodeMetricsExpired, TestFilterUsage), ported as data with the expected
// numbers worked out in comments, then the rounding and expiry boundaries.
//
// Shared facts: node 96 cores (96000m) and 512 GiB; the upstream test pod &corev1.Pod{} is
// BestEffort, hence batch, and estimates at the defaults 250m and 200 MiB (unscaled).
#include <optional>
#include <vector>

#include "tests/unit/cluster/loadaware/loadaware_test_util.h"

namespace qrm::cluster::loadaware::testing {
namespace {

// ---- TestFilterExpiredNodeMetric and TestEnableScheduleWhenNodeMetricsExpired -------------
// Defaults (filterExpiredNodeMetrics true, expiration 180 s); the node has no allocatable and
// the metrics have no status.nodeMetric, as upstream.

FilterVerdict FilterExpiry(std::optional<bool> enable_when_expired, const NodeMetricInput& m) {
  auto cache = MakeCache(Defaulted([&](LoadAwareArgs& a) {
    a.enable_schedule_when_node_metrics_expired = enable_when_expired;
  }));
  NodeInput node;
  node.name = kNodeName;
  cache->UpsertNode(node);
  cache->UpsertNodeMetric(m);
  return FilterOne(*cache, EmptyPod());
}

TEST_CASE("upstream TestFilterExpiredNodeMetric") {
  // "filter healthy nodeMetrics": fresh, no status.nodeMetric -> passes (cold start).
  CHECK(FilterExpiry(std::nullopt, MetricBuilder().Updated(kNow)).path == FilterPath::kColdStart);
  // "filter unhealthy nodeMetric with nil updateTime" -> node(s) nodeMetric expired.
  FilterVerdict no_time = FilterExpiry(std::nullopt, MetricBuilder());
  CHECK(no_time.path == FilterPath::kMetricExpired);
  CHECK(no_time.KoordinatorReason() == "node(s) nodeMetric expired");
  // "filter unhealthy nodeMetric with expired updateTime": now - 180 s -> 180 s >= 180 s.
  CHECK(FilterExpiry(std::nullopt, MetricBuilder().Updated(kNow - 180s)).path ==
        FilterPath::kMetricExpired);
}

TEST_CASE("upstream TestEnableScheduleWhenNodeMetricsExpired") {
  CHECK(FilterExpiry(std::nullopt, MetricBuilder().Updated(kNow)).schedulable());
  // enable = true: expired metrics do not filter.
  CHECK(FilterExpiry(true, MetricBuilder()).path == FilterPath::kMetricExpiredAllowed);
  CHECK(FilterExpiry(true, MetricBuilder().Updated(kNow - 180s)).path ==
        FilterPath::kMetricExpiredAllowed);
  // enable = false: they do.
  CHECK(FilterExpiry(false, MetricBuilder()).path == FilterPath::kMetricExpired);
  CHECK(FilterExpiry(false, MetricBuilder().Updated(kNow - 180s)).path ==
        FilterPath::kMetricExpired);
}

// ---- TestFilterUsage ------------------------------------------------------------------------
// Upstream's harness: filterExpiredNodeMetrics false, then defaults (thresholds cpu 65 memory
// 95 unless set); pods assigned with PodScheduled 10 s ago; metric updated now, interval 60 s.

struct UsageCase {
  LoadAwareArgs args;
  std::optional<NodeMetricInput> metric;
  std::vector<PodInput> pods;
  PodInput test_pod = EmptyPod();
  std::optional<CustomUsageThresholds> custom;
};

FilterVerdict FilterUsage(UsageCase c) {
  c.args.filter_expired_node_metrics = false;
  SetDefaults(c.args);
  auto cache = MakeCache(c.args);
  NodeInput node = Node96();
  node.custom_usage_thresholds = c.custom;
  cache->UpsertNode(node);
  if (c.metric) cache->UpsertNodeMetric(*c.metric);
  for (PodInput& p : c.pods) {
    p.node_name = kNodeName;
    p.scheduled_time = kNow - 10s;
    cache->AssignPod(kNodeName, p, kNow);
  }
  return FilterOne(*cache, c.test_pod);
}

MetricBuilder Usage(int64_t cores, int64_t gib) {
  MetricBuilder m;
  m.Updated(kNow).NodeUsage(CpuMem(Cores(cores), gib * kGi));
  return m;
}

PodInput ProdPod(std::string name) {
  return PodBuilder("default", std::move(name)).Priority(9999);  // PriorityProdValueMax
}

TEST_CASE("upstream TestFilterUsage plain thresholds") {
  // "filter normal usage": cpu (60000 + 250) / 96000 = 62.76% -> 63 <= 65; memory
  // (256 GiB + 200 MiB) / 512 GiB = 50.04% -> 50 <= 95.
  CHECK(FilterUsage({.metric = Usage(60, 256)}).path == FilterPath::kWithinThresholds);
  // "filter node missing NodeMetrics": passes.
  CHECK(FilterUsage({}).path == FilterPath::kNoMetric);
  // "filter exceed cpu usage": (70000 + 250) / 96000 = 73.18% -> 73 > 65.
  FilterVerdict cpu = FilterUsage({.metric = Usage(70, 256)});
  CHECK(cpu.KoordinatorReason() == "node(s) cpu usage exceed threshold");
  CHECK(cpu.usage_percent == 73);
  CHECK(cpu.threshold_percent == 65);
  CHECK(cpu.Reason() ==
        "node(s) cpu usage exceed threshold (usage 73% > threshold 65%, estimated 70250m of "
        "allocatable 96000m)");
  // "filter exceed memory usage": cpu 30250 -> 32%; memory 500 GiB + 200 MiB -> 97.69% -> 98.
  FilterVerdict mem = FilterUsage({.metric = Usage(30, 500)});
  CHECK(mem.KoordinatorReason() == "node(s) memory usage exceed threshold");
  CHECK(mem.usage_percent == 98);
  // "disable filter exceed memory usage": usageThresholds {memory: 0} is not empty, so no
  // default: every threshold 0, the filter is off.
  LoadAwareArgs off;
  off.usage_thresholds = {{"memory", 0}};
  CHECK(FilterUsage({.args = off, .metric = Usage(30, 500)}).path == FilterPath::kThresholdsOff);
}

TEST_CASE("upstream TestFilterUsage aggregated thresholds") {
  // "filter exceed p95 cpu usage": aggregated {cpu 60, p95, 5m}; node usage 30 cores but p95
  // over 5m 70 cores: (70000 + 250) / 96000 -> 73 > 60, an aggregated reason.
  LoadAwareArgs args;
  args.aggregated = AggregatedArgs{{{"cpu", 60}}, "p95", 300s, "", 0s};
  MetricBuilder m = Usage(30, 100);
  m.Aggregated(300s, "p95", CpuMem(Cores(70), 256 * kGi));
  FilterVerdict v = FilterUsage({.args = args, .metric = m});
  CHECK(v.path == FilterPath::kAggregatedUsageExceeds);
  CHECK(v.KoordinatorReason() == "node(s) cpu aggregated usage exceed threshold");
  CHECK(v.usage_percent == 73);
  // "filter exceed p95 cpu usage by custom usage": the same thresholds from the node.
  CustomUsageThresholds custom;
  custom.aggregated_usage = CustomAggregatedUsage{{{"cpu", 60}}, "p95", 300s};
  CHECK(FilterUsage({.metric = m, .custom = custom}).path == FilterPath::kAggregatedUsageExceeds);
}

TEST_CASE("upstream TestFilterUsage custom node thresholds") {
  // "filter exceed memory usage by custom usage thresholds": node {memory 60} replaces the
  // args' thresholds whole (cpu is no longer filtered); (316 GiB + 200 MiB) / 512 GiB =
  // 61.76% -> 62 > 60.
  CustomUsageThresholds custom;
  custom.usage_thresholds = {{"memory", 60}};
  FilterVerdict v = FilterUsage({.metric = Usage(30, 316), .custom = custom});
  CHECK(v.KoordinatorReason() == "node(s) memory usage exceed threshold");
  CHECK(v.threshold_percent == 60);
}

MetricBuilder TwoProdPods(int64_t cores, int64_t gib, int64_t cpu1, int64_t gib1, int64_t cpu2,
                          int64_t gib2, const char* priority2 = "koord-prod") {
  MetricBuilder m = Usage(cores, gib);
  m.Pod("default", "prod-pod-1", "koord-prod", CpuMem(Cores(cpu1), gib1 * kGi));
  m.Pod("default", "prod-pod-2", priority2, CpuMem(Cores(cpu2), gib2 * kGi));
  return m;
}

LoadAwareArgs Thresholds(int64_t cpu, int64_t mem, int64_t prod_cpu, int64_t prod_mem) {
  LoadAwareArgs a;
  a.usage_thresholds = {{"cpu", cpu}, {"memory", mem}};
  if (prod_cpu || prod_mem) a.prod_usage_thresholds = {{"cpu", prod_cpu}, {"memory", prod_mem}};
  return a;
}

TEST_CASE("upstream TestFilterUsage prod thresholds") {
  const MetricBuilder m = TwoProdPods(63, 500, 30, 200, 33, 300);
  const std::vector<PodInput> pods = {ProdPod("prod-pod-1"), ProdPod("prod-pod-2")};
  // "prod usage filter is not enabled by default": thresholds 100/100, empty (batch) pod;
  // cpu 63250 -> 65.9% -> 66 <= 100, memory 97.7% -> 98 <= 100. The assigned pods are recent
  // but report more than their 250m/200 MiB estimate: no delta.
  CHECK(FilterUsage({.args = Thresholds(100, 100, 0, 0), .metric = m, .pods = pods}).path ==
        FilterPath::kWithinThresholds);
  // "filter prod cpu usage": prod {50, 100}; a prod pod sees prod usage 30 + 33 = 63 cores,
  // 500 GiB, plus its 250m: 66 > 50.
  FilterVerdict cpu = FilterUsage({.args = Thresholds(100, 100, 50, 100),
                                   .metric = m,
                                   .pods = pods,
                                   .test_pod = ProdPod("prod-pod-3")});
  CHECK(cpu.KoordinatorReason() == "node(s) cpu usage exceed threshold");
  CHECK(cpu.usage_percent == 66);
  // "filter prod memory usage": prod {100, 50}: memory 98 > 50.
  CHECK(FilterUsage({.args = Thresholds(100, 100, 100, 50),
                     .metric = m,
                     .pods = pods,
                     .test_pod = ProdPod("prod-pod-3")})
            .KoordinatorReason() == "node(s) memory usage exceed threshold");
  // "filter prod memory usage with custom usage configuration": node prod {100, 50}.
  CustomUsageThresholds custom;
  custom.prod_usage_thresholds = {{"cpu", 100}, {"memory", 50}};
  CHECK(FilterUsage({.args = Thresholds(100, 100, 100, 100),
                     .metric = m,
                     .pods = pods,
                     .test_pod = ProdPod("prod-pod-3"),
                     .custom = custom})
            .KoordinatorReason() == "node(s) memory usage exceed threshold");
}

TEST_CASE("upstream TestFilterUsage daemonset pod") {
  // "filter daemonset pod exceed cpu usage": 70 cores would exceed, but DaemonSet pods pass.
  CHECK(FilterUsage({.metric = Usage(70, 256),
                     .test_pod = PodBuilder("default", "test-pod").Priority(9999).DaemonSet()})
            .path == FilterPath::kDaemonSetPod);
}

TEST_CASE("upstream TestFilterUsage new pod request") {
  // "filter prod cpu usage with new pod request configuration": prod {60, 100}; prod usage
  // 30 + 23 = 53 cores; the pod asks 20 cores -> 20000 * 85% = 17000m: 70000 / 96000 ->
  // 73 > 60.
  FilterVerdict prod_cpu = FilterUsage(
      {.args = Thresholds(65, 100, 60, 100),
       .metric = TwoProdPods(53, 500, 30, 100, 23, 200),
       .pods = {ProdPod("prod-pod-1"), ProdPod("prod-pod-2")},
       .test_pod =
           PodBuilder("default", "prod-pod-3").Req(CpuMem(Cores(20), 100 * kGi)).Priority(9999)});
  CHECK(prod_cpu.KoordinatorReason() == "node(s) cpu usage exceed threshold");
  CHECK(prod_cpu.usage_percent == 73);
  // "filter mid cpu usage with new pod request configuration": a mid pod is filtered on the
  // plain thresholds {65, 100}: node usage 53 cores + mid-cpu 12000 * 85% = 10200 ->
  // 63200 / 96000 = 65.83% -> 66 > 65.
  FilterVerdict mid_cpu = FilterUsage(
      {.args = Thresholds(65, 100, 60, 100),
       .metric = TwoProdPods(53, 300, 30, 100, 23, 200, ""),
       .pods = {ProdPod("prod-pod-1"), ProdPod("prod-pod-2")},
       .test_pod =
           PodBuilder("default", "prod-pod-3")
               .Req({{"kubernetes.io/mid-cpu", 12000}, {"kubernetes.io/mid-memory", 100 * kGi}})
               .Priority(7999)});
  CHECK(mid_cpu.KoordinatorReason() == "node(s) cpu usage exceed threshold");
  CHECK(mid_cpu.usage_percent == 66);
  // "filter memory usage with new pod request configuration": prod {60, 80}; the pod asks
  // 1 core and 165 GiB -> 850m and 115.5 GiB; cpu 53850 -> 56 <= 60; memory 300 + 115.5 =
  // 415.5 GiB / 512 = 81.15% -> 81 > 80.
  FilterVerdict prod_mem = FilterUsage(
      {.args = Thresholds(65, 85, 60, 80),
       .metric = TwoProdPods(53, 300, 30, 100, 23, 200),
       .pods = {ProdPod("prod-pod-1"), ProdPod("prod-pod-2")},
       .test_pod =
           PodBuilder("default", "prod-pod-3").Req(CpuMem(Cores(1), 165 * kGi)).Priority(9999)});
  CHECK(prod_mem.KoordinatorReason() == "node(s) memory usage exceed threshold");
  CHECK(prod_mem.usage_percent == 81);
  // "filter mid memory usage with new pod request configuration": plain {65, 85}; mid-cpu 1k
  // -> 850m, mid-memory 200 GiB -> 140 GiB; memory 300 + 140 = 440 GiB -> 85.94% -> 86 > 85.
  FilterVerdict mid_mem = FilterUsage(
      {.args = Thresholds(65, 85, 60, 80),
       .metric = TwoProdPods(53, 300, 30, 100, 23, 200, ""),
       .pods = {ProdPod("prod-pod-1"), ProdPod("prod-pod-2")},
       .test_pod =
           PodBuilder("default", "prod-pod-3")
               .Req({{"kubernetes.io/mid-cpu", 1000}, {"kubernetes.io/mid-memory", 200 * kGi}})
               .Priority(7999)});
  CHECK(mid_mem.KoordinatorReason() == "node(s) memory usage exceed threshold");
  CHECK(mid_mem.usage_percent == 86);
}

TEST_CASE("upstream TestFilterUsage assigned cache pods") {
  // "filter prod memory usage with assignedCache pod": prod {60, 70}. Prod usage: prod-pod-1's
  // 30 cores and 100 GiB; prod-pod-2 (1 core, 200 GiB requested) is not in the metric, so its
  // whole estimate 850m and 140 GiB is prod delta; the new pod adds the same: memory 100 + 140
  // + 140 = 380 GiB -> 74.2% -> 74 > 70 (cpu 31700 -> 33 <= 60).
  MetricBuilder one = Usage(53, 300);
  one.Pod("default", "prod-pod-1", "koord-prod", CpuMem(Cores(30), 100 * kGi));
  const PodInput prod2 =
      PodBuilder("default", "prod-pod-2").Req(CpuMem(Cores(1), 200 * kGi)).Priority(9999);
  FilterVerdict prod = FilterUsage(
      {.args = Thresholds(65, 85, 60, 70),
       .metric = one,
       .pods = {ProdPod("prod-pod-1"), prod2},
       .test_pod =
           PodBuilder("default", "prod-pod-3").Req(CpuMem(Cores(1), 200 * kGi)).Priority(9999)});
  CHECK(prod.KoordinatorReason() == "node(s) memory usage exceed threshold");
  CHECK(prod.usage_percent == 74);
  // "filter mid cpu usage with assignedCache pod": node 33 cores; mid-pod-2 (mid-cpu 20k) is
  // not reported: delta 17000m; the new mid pod 17000m more: 67000 / 96000 = 69.8% -> 70 > 65.
  MetricBuilder low = Usage(33, 110);
  low.Pod("default", "prod-pod-1", "koord-prod", CpuMem(Cores(30), 100 * kGi));
  const PodInput mid =
      PodBuilder("default", "mid-pod-2")
          .Req({{"kubernetes.io/mid-cpu", 20000}, {"kubernetes.io/mid-memory", 200 * kGi}})
          .Priority(7999);
  PodInput mid3 = mid;
  mid3.name = "mid-pod-3";
  mid3.uid = "mid-pod-3";
  FilterVerdict v = FilterUsage({.args = Thresholds(65, 85, 60, 70),
                                 .metric = low,
                                 .pods = {ProdPod("prod-pod-1"), mid},
                                 .test_pod = mid3});
  CHECK(v.KoordinatorReason() == "node(s) cpu usage exceed threshold");
  CHECK(v.usage_percent == 70);
}

// ---- Boundaries -----------------------------------------------------------------------------

// A node of `milli_cpu` allocatable cpu whose metric reports `used` milli-cpu; the pod estimates
// 0 cpu (a free pod has no resource names) so the usage is exactly `used`.
FilterVerdict CpuAt(int64_t used, int64_t milli_cpu, int64_t threshold) {
  auto cache = MakeCache(Defaulted([&](LoadAwareArgs& a) {
    a.usage_thresholds = {{"cpu", threshold}};
  }));
  NodeInput node = Node96();
  node.allocatable["cpu"] = milli_cpu;
  cache->UpsertNode(node);
  cache->UpsertNodeMetric(MetricBuilder().Updated(kNow).NodeUsage(CpuMem(used, 0)));
  return FilterOne(*cache, PodBuilder("default", "free").Priority(3500));
}

TEST_CASE("filter compares the rounded usage percent with <=") {
  // 650 / 1000 -> 65 <= 65 passes; 654 -> 65.4 -> 65 passes; 655 -> 65.5 -> 66 fails.
  CHECK(CpuAt(650, 1000, 65).path == FilterPath::kWithinThresholds);
  CHECK(CpuAt(654, 1000, 65).path == FilterPath::kWithinThresholds);
  CHECK(CpuAt(655, 1000, 65).usage_percent == 66);
  CHECK(CpuAt(655, 1000, 65).path == FilterPath::kUsageExceeds);
}

TEST_CASE("filter rounds like Go: divide then scale in doubles") {
  // 29 / 200 = 0.145 is 0.14499999999999999 as a double; * 100 = 14.499999999999998, which
  // rounds to 14 (the exact 14.5 would round to 15). Threshold 14: Koordinator passes.
  FilterVerdict v = CpuAt(29, 200, 14);
  CHECK(v.path == FilterPath::kWithinThresholds);
  CHECK(CpuAt(29, 200, 13).usage_percent == 14);
}

TEST_CASE("filter skips an extended resource the node has none of") {
  // A threshold on a resource the node does not have (allocatable 0) is skipped upstream.
  auto cache = MakeCache(Defaulted([](LoadAwareArgs& a) {
    a.usage_thresholds = {{"nvidia.com/gpu", 10}};
  }));
  cache->UpsertNode(Node96());
  cache->UpsertNodeMetric(
      MetricBuilder().Updated(kNow).NodeUsage({{"cpu", 0}, {"memory", 0}, {"nvidia.com/gpu", 4}}));
  CHECK(FilterOne(*cache, EmptyPod()).path == FilterPath::kWithinThresholds);
}

TEST_CASE("metric expiry boundary is at exactly nodeMetricExpirationSeconds") {
  auto cache = MakeCache(Defaulted());
  cache->UpsertNode(Node96());
  cache->UpsertNodeMetric(MetricBuilder().Updated(kNow).NodeUsage(CpuMem(0, 0)));
  // updated 180 s - 1 ns ago: fresh; 180 s ago: expired (time.Since >= 180 s).
  CHECK(FilterOne(*cache, EmptyPod(), kNodeName, kNow + 180s - 1ns).path ==
        FilterPath::kWithinThresholds);
  CHECK(FilterOne(*cache, EmptyPod(), kNodeName, kNow + 180s).path == FilterPath::kMetricExpired);
  // An update time in the future (clock skew) is not expired.
  CHECK(FilterOne(*cache, EmptyPod(), kNodeName, kNow - 1h).path == FilterPath::kWithinThresholds);
}

TEST_CASE("filterExpiredNodeMetrics false ignores expiry and filters on the stale usage") {
  auto cache =
      MakeCache(Defaulted([](LoadAwareArgs& a) { a.filter_expired_node_metrics = false; }));
  cache->UpsertNode(Node96());
  cache->UpsertNodeMetric(MetricBuilder().Updated(kNow - 1h).NodeUsage(CpuMem(Cores(90), 0)));
  // 90250 / 96000 -> 94 > 65.
  CHECK(FilterOne(*cache, EmptyPod()).usage_percent == 94);
}

TEST_CASE("prod thresholds apply to prod pods only") {
  // Prod {cpu 10}; prod usage 0 but node usage 63 cores. A prod pod: 250m / 96000 -> 0 <= 10
  // passes; a batch pod is filtered on the plain 65%: 63250 / 96000 -> 66 > 65 fails.
  auto cache = MakeCache(Defaulted([](LoadAwareArgs& a) {
    a.prod_usage_thresholds = {{"cpu", 10}};
  }));
  cache->UpsertNode(Node96());
  cache->UpsertNodeMetric(MetricBuilder().Updated(kNow).NodeUsage(CpuMem(Cores(63), 0)));
  CHECK(FilterOne(*cache, ProdPod("p")).path == FilterPath::kWithinThresholds);
  FilterVerdict batch = FilterOne(*cache, EmptyPod());
  CHECK(batch.path == FilterPath::kUsageExceeds);
  CHECK(batch.usage_percent == 66);
}

TEST_CASE("aggregated thresholds of zero switch the filter off even with plain thresholds") {
  // aggregated {cpu 0} with a type counts as configured, and replaces the plain 65/95 whole:
  // nothing is filtered, even at 95 cores.
  auto cache = MakeCache(Defaulted([](LoadAwareArgs& a) {
    a.aggregated = AggregatedArgs{{{"cpu", 0}}, "p95", 0s, "", 0s};
  }));
  cache->UpsertNode(Node96());
  cache->UpsertNodeMetric(MetricBuilder().Updated(kNow).NodeUsage(CpuMem(Cores(95), 0)));
  CHECK(FilterOne(*cache, EmptyPod()).path == FilterPath::kThresholdsOff);
}

TEST_CASE("aggregated filter falls back as getTargetAggregatedUsage does") {
  auto args = [](std::chrono::seconds duration) {
    return Defaulted([&](LoadAwareArgs& a) {
      a.aggregated = AggregatedArgs{{{"cpu", 60}}, "p95", duration, "", 0s};
    });
  };
  // Duration 0 and no p95 reported: the node usage, 70 cores -> 73 > 60.
  auto zero = MakeCache(args(0s));
  zero->UpsertNode(Node96());
  zero->UpsertNodeMetric(MetricBuilder().Updated(kNow).NodeUsage(CpuMem(Cores(70), 0)));
  CHECK(FilterOne(*zero, EmptyPod()).usage_percent == 73);
  // Duration 5m not reported: not the node usage but every assigned pod's whole estimate
  // (none here): 250m -> 0% passes, although the node runs at 70 cores.
  auto missing = MakeCache(args(300s));
  missing->UpsertNode(Node96());
  missing->UpsertNodeMetric(MetricBuilder().Updated(kNow).NodeUsage(CpuMem(Cores(70), 0)));
  CHECK(FilterOne(*missing, EmptyPod()).path == FilterPath::kWithinThresholds);
}

}  // namespace
}  // namespace qrm::cluster::loadaware::testing
