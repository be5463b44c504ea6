// Bad input: every case gives a clear error for the node it concerns (or for the request, when
// the pod being scheduled is bad); none crashes, and none lets a node pass or score as if idle.
// Koordinator takes these values as they come; docs/loadaware-cases.md lists the differences.
#include <string>

#include "tests/unit/cluster/loadaware/loadaware_test_util.h"

namespace qrm::cluster::loadaware::testing {
namespace {

using Catch::Matchers::Contains;

PodInput Pod() {
  return PodBuilder("default", "incoming").Req(CpuMem(Cores(1), kGi));
}

// A cache with the defaults, one node and one metric; both verdicts for the pod.
struct Both {
  FilterVerdict filter;
  NodeScore score;
};
Both Decide(const NodeInput& node, const NodeMetricInput& metric, const PodInput& pod = Pod()) {
  auto cache = MakeCache(Defaulted());
  cache->UpsertNode(node);
  cache->UpsertNodeMetric(metric);
  return {FilterOne(*cache, pod, node.name), ScoreOne(*cache, pod, node.name)};
}

void RequireNodeError(const Both& b, const std::string& what) {
  CHECK(b.filter.path == FilterPath::kError);
  CHECK_FALSE(b.filter.schedulable());
  CHECK_THAT(b.filter.error.message(), Contains(what));
  CHECK_THAT(b.filter.error.message(), Contains(std::string("node ") + kNodeName));
  CHECK(b.score.path == ScorePath::kError);
  CHECK_THAT(b.score.error.message(), Contains(what));
}

MetricBuilder Fresh() {
  MetricBuilder m;
  m.Updated(kNow);
  return m;
}

TEST_CASE("negative node usage is an error for the node") {
  RequireNodeError(Decide(Node96(), Fresh().NodeUsage(CpuMem(-5000, kGi))),
                   "NodeMetric nodeUsage: cpu is negative (-5000)");
}

TEST_CASE("absurd node usage is an error for the node") {
  RequireNodeError(Decide(Node96(), Fresh().NodeUsage(CpuMem(1000, int64_t{1} << 60))),
                   "NodeMetric nodeUsage: memory = 1152921504606846976 is absurd");
}

TEST_CASE("a node usage without cpu or memory is an error not an idle node") {
  // Upstream reads a missing cpu as 0 usage: "score empty node" with ResourceList{} scores 90.
  RequireNodeError(Decide(Node96(), Fresh().NodeUsage({})), "nodeUsage has no cpu");
  RequireNodeError(Decide(Node96(), Fresh().NodeUsage({{"cpu", 1000}})), "nodeUsage has no memory");
}

TEST_CASE("bad aggregated pod and system usage are errors for the node") {
  MetricBuilder agg = Fresh();
  agg.NodeUsage(CpuMem(0, 0)).Aggregated(300s, "p95", {{"cpu", 1}});
  RequireNodeError(Decide(Node96(), agg), "aggregatedNodeUsages p95 over 300s has no memory");
  MetricBuilder pod = Fresh();
  pod.NodeUsage(CpuMem(0, 0)).Pod("default", "p", "", CpuMem(-1, 0));
  RequireNodeError(Decide(Node96(), pod), "NodeMetric pod default/p: cpu is negative (-1)");
  MetricBuilder sys = Fresh();
  sys.NodeUsage(CpuMem(0, 0)).SystemUsage(CpuMem(0, -1));
  RequireNodeError(Decide(Node96(), sys), "systemUsage: memory is negative");
}

TEST_CASE("a bad report interval is an error for the node") {
  RequireNodeError(Decide(Node96(), Fresh().Interval(-60).NodeUsage(CpuMem(0, 0))),
                   "reportIntervalSeconds -60 is outside");
}

TEST_CASE("unknown resource names in a metric are ignored as upstream") {
  // Not vectorized, so never read: a negative GPU usage changes nothing.
  Both b = Decide(Node96(), Fresh().NodeUsage({{"cpu", 0}, {"memory", 0}, {"nvidia.com/gpu", -3}}));
  CHECK(b.filter.path == FilterPath::kWithinThresholds);
  CHECK(b.score.path == ScorePath::kScored);
  CHECK(b.score.score == 99);  // 850m and 0.7 GiB of 96 cores and 512 GiB: 99 and 99
}

TEST_CASE("zero or missing allocatable cpu or memory is an error for the node") {
  NodeInput zero_cpu = Node96();
  zero_cpu.allocatable["cpu"] = 0;
  RequireNodeError(Decide(zero_cpu, Fresh().NodeUsage(CpuMem(0, 0))),
                   "allocatable cpu is missing or 0");
  NodeInput no_memory = Node96();
  no_memory.allocatable.erase("memory");
  RequireNodeError(Decide(no_memory, Fresh().NodeUsage(CpuMem(0, 0))),
                   "allocatable memory is missing or 0");
  NodeInput negative = Node96();
  negative.raw_allocatable = ResourceList{{"cpu", -1}};
  RequireNodeError(Decide(negative, Fresh().NodeUsage(CpuMem(0, 0))),
                   "allocatable cpu is negative (-1)");
}

TEST_CASE("a bad usage-thresholds annotation is a filter error for the node") {
  NodeInput node = Node96();
  node.custom_usage_thresholds = CustomUsageThresholds{{{"cpuu", 50}}, {}, std::nullopt};
  Both b = Decide(node, Fresh().NodeUsage(CpuMem(0, 0)));
  CHECK(b.filter.path == FilterPath::kError);
  CHECK_THAT(b.filter.error.message(), Contains("names resource \"cpuu\", unknown to the plugin"));
  CHECK_THAT(b.filter.error.message(), Contains("known: cpu, memory"));
  // The score does not read the annotation.
  CHECK(b.score.path == ScorePath::kScored);
  node.custom_usage_thresholds = CustomUsageThresholds{{}, {{"memory", -5}}, std::nullopt};
  CHECK_THAT(Decide(node, Fresh().NodeUsage(CpuMem(0, 0))).filter.error.message(),
             Contains("prodUsageThresholds of memory is negative (-5)"));
}

TEST_CASE("an assigned pod with bad quantities is an error for its node") {
  auto cache = MakeCache(Defaulted());
  cache->UpsertNode(Node96());
  cache->UpsertNodeMetric(Fresh().NodeUsage(CpuMem(0, 0)));
  // Prod, so its cpu request is read (a batch pod would be read on batch-cpu only).
  cache->AssignPod(kNodeName, PodBuilder("default", "bad").Priority(9999).Req(CpuMem(-1000, 0)),
                   kNow);
  FilterVerdict f = FilterOne(*cache, Pod());
  CHECK(f.path == FilterPath::kError);
  CHECK_THAT(f.error.message(), Contains("pod default/bad: request cpu = -1000 is negative"));
  CHECK(ScoreOne(*cache, Pod()).path == ScorePath::kError);
  // Gone, the node is fine again.
  cache->UnassignPod(kNodeName, "default/bad-uid");
  CHECK(FilterOne(*cache, Pod()).path == FilterPath::kWithinThresholds);
}

TEST_CASE("a bad incoming pod fails the request") {
  auto cache = MakeCache(Defaulted());
  cache->UpsertNode(Node96());
  const PodInput absurd = PodBuilder("default", "big").Req(CpuMem(Cores(1), int64_t{1} << 55));
  StatusOr<std::vector<FilterVerdict>> f = cache->Filter(absurd, {kNodeName}, kNow);
  REQUIRE_FALSE(f.ok());
  CHECK_THAT(f.status().message(), Contains("pod default/big: request memory"));
  CHECK_FALSE(cache->Score(absurd, {kNodeName}, kNow).ok());
  LoadAwareArgs custom = Defaulted([](LoadAwareArgs& a) { a.allow_customize_estimation = true; });
  auto allowing = MakeCache(custom);
  const PodInput negative_factor =
      PodBuilder("default", "f").Req(CpuMem(1000, 0)).ScalingFactors({{"cpu", -50}});
  CHECK_THAT(allowing->Filter(negative_factor, {kNodeName}, kNow).status().message(),
             Contains("scaling factor of cpu = -50"));
}

TEST_CASE("a node the cache does not know is an error") {
  auto cache = MakeCache(Defaulted());
  FilterVerdict f = FilterOne(*cache, Pod(), "ghost");
  CHECK(f.path == FilterPath::kError);
  CHECK_THAT(f.error.message(), Contains("node ghost: no Node object"));
  CHECK(ScoreOne(*cache, Pod(), "ghost").path == ScorePath::kError);
  // A metric alone does not make a node known.
  cache->UpsertNodeMetric(MetricBuilder("ghost").Updated(kNow).NodeUsage(CpuMem(0, 0)));
  CHECK(FilterOne(*cache, Pod(), "ghost").path == FilterPath::kError);
}

TEST_CASE("errors surface only where upstream would read the bad value") {
  // A bad usage behind an expired metric: the expiry decides, as upstream.
  Both expired = Decide(Node96(), MetricBuilder().Updated(kNow - 1h).NodeUsage(CpuMem(-1, 0)));
  CHECK(expired.filter.path == FilterPath::kMetricExpired);
  CHECK(expired.score.path == ScorePath::kMetricExpired);
  // Zero allocatable on a node without metric: passes and scores 0, as upstream.
  auto cache = MakeCache(Defaulted());
  NodeInput node = Node96();
  node.allocatable.clear();
  cache->UpsertNode(node);
  CHECK(FilterOne(*cache, Pod()).path == FilterPath::kNoMetric);
  CHECK(ScoreOne(*cache, Pod()).path == ScorePath::kNoMetric);
}

TEST_CASE("a bad node does not affect the others in the same request") {
  auto cache = MakeCache(Defaulted());
  cache->UpsertNode(Node96("good"));
  cache->UpsertNode(Node96("bad"));
  cache->UpsertNodeMetric(MetricBuilder("good").Updated(kNow).NodeUsage(CpuMem(0, 0)));
  cache->UpsertNodeMetric(MetricBuilder("bad").Updated(kNow).NodeUsage(CpuMem(-1, 0)));
  StatusOr<std::vector<NodeScore>> s = cache->Score(Pod(), {"bad", "good"}, kNow);
  REQUIRE(s.ok());
  CHECK((*s)[0].path == ScorePath::kError);
  CHECK((*s)[1].path == ScorePath::kScored);
  CHECK((*s)[1].score == 99);
}

}  // namespace
}  // namespace qrm::cluster::loadaware::testing
