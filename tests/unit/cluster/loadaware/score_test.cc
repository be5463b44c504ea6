// The score: the cases of upstream TestScore (load_aware_test.go) with the scores worked out
// in comments, then the formula's corners.
//
// Shared facts: node 96000m and 512 GiB = 549755813888 bytes. The upstream pod asks 16 cores
// and 32 GiB (requests = limits): estimate 16000 * 85% = 13600m and 32 GiB * 70% =
// 24051816857.6 -> 24051816858 bytes (22.4 GiB). Per resource score = (alloc - used) * 100 /
// alloc, truncated; node score = weighted mean (cpu 1, memory 1), truncated.
#include <optional>
#include <vector>

#include "cluster/loadaware/formulas.h"
#include "tests/unit/cluster/loadaware/loadaware_test_util.h"

namespace qrm::cluster::loadaware::testing {
namespace {

PodInput Pod16(std::string name = "test-pod-1") {
  return PodBuilder("default", std::move(name))
      .Container(CpuMem(Cores(16), 32 * kGi), CpuMem(Cores(16), 32 * kGi));
}

struct ScoreCase {
  LoadAwareArgs args;
  std::optional<NodeMetricInput> metric;
  std::vector<PodInput> assigned;  // assigned through the informer: timestamp "now"
  PodInput pod = Pod16();
};

NodeScore Score(ScoreCase c) {
  SetDefaults(c.args);
  auto cache = MakeCache(c.args);
  cache->UpsertNode(Node96());
  if (c.metric) cache->UpsertNodeMetric(*c.metric);
  for (PodInput& p : c.assigned) cache->AssignPod(kNodeName, p, kNow);
  return ScoreOne(*cache, c.pod);
}

// Upstream's "ResourceList{}" node usage reads as zero usage there; qrm refuses a usage list
// without cpu and memory (bad_input_test.cc), so the ported cases say zero explicitly.
MetricBuilder Usage(int64_t milli_cpu, int64_t memory, TimePoint updated = kNow) {
  MetricBuilder m;
  m.Updated(updated).NodeUsage(CpuMem(milli_cpu, memory));
  return m;
}

TEST_CASE("upstream TestScore node states") {
  // "score node with expired nodeMetric": updated 180 s ago -> 0.
  NodeScore expired = Score({.metric = Usage(0, 0, kNow - 180s)});
  CHECK(expired.path == ScorePath::kMetricExpired);
  CHECK(expired.score == 0);
  // "score empty node": cpu (96000 - 13600) * 100 / 96000 = 85.8 -> 85; memory
  // (512 - 22.4) / 512 = 95.6 -> 95; (85 + 95) / 2 = 90.
  CHECK(Score({.metric = Usage(0, 0)}).score == 90);
  // "score node missing NodeMetrics" -> 0.
  NodeScore missing = Score({});
  CHECK(missing.path == ScorePath::kNoMetric);
  CHECK(missing.score == 0);
  // "score load node": 32 cores and 10 GiB used: cpu 45600 -> 52.5 -> 52; memory 32.4 GiB ->
  // 93.67 -> 93; (52 + 93) / 2 = 72.
  CHECK(Score({.metric = Usage(Cores(32), 10 * kGi)}).score == 72);
}

TEST_CASE("upstream TestScore aggregated") {
  LoadAwareArgs p95;
  p95.aggregated = AggregatedArgs{{}, "", 0s, "p95", 300s};
  // "score load node with p95": node usage 0 but p95 over 5m 32 cores and 10 GiB -> 72 (the
  // p99 entry is not read).
  MetricBuilder m = Usage(0, 0);
  m.Aggregated(300s, "p95", CpuMem(Cores(32), 10 * kGi));
  m.Aggregated(300s, "p99", CpuMem(Cores(50), 70 * kGi));
  CHECK(Score({.args = p95, .metric = m}).score == 72);
  // "score load node with p95 but have not reported usage": no p95 at 5m, so the sum of the
  // assigned pods' whole estimates (none): the pod alone -> 90.
  CHECK(Score({.args = p95, .metric = Usage(0, 0)}).score == 90);
  // "... and have assigned pods": one assigned 16-core pod, reported at 1 core: not the delta
  // but its whole estimate counts: cpu 27200 -> 71.7 -> 71; memory 44.8 GiB -> 91.25 -> 91;
  // (71 + 91) / 2 = 81.
  MetricBuilder reported = Usage(0, 0);
  reported.Pod("default", "assigned-pod-1", "", CpuMem(Cores(1), 1 * kGi));
  CHECK(Score({.args = p95, .metric = reported, .assigned = {Pod16("assigned-pod-1")}}).score ==
        81);
}

TEST_CASE("upstream TestScore just assigned pods") {
  // "score load node with just assigned pod": usage 32 cores, 10 GiB; the assigned pod (not
  // reported, assigned now) adds its estimate, the new pod too: cpu 59200 -> 38.3 -> 38;
  // memory 54.8 GiB -> 89.3 -> 89; (38 + 89) / 2 = 63.
  const std::vector<PodInput> one = {Pod16("assigned-pod-1")};
  CHECK(Score({.metric = Usage(Cores(32), 10 * kGi), .assigned = one}).score == 63);
  // "... where after updateTime": metric updated 10 s ago, pod assigned now -> 63.
  CHECK(Score({.metric = Usage(Cores(32), 10 * kGi, kNow - 10s), .assigned = one}).score == 63);
  // "... where before updateTime": upstream meant a pod assigned 10 s before the update (its
  // informer path stamps it "now" anyway); 10 s before is still within the 60 s interval -> 63.
  PodInput before = Pod16("assigned-pod-1");
  before.scheduled_time = kNow - 10s;
  CHECK(Score({.metric = Usage(Cores(32), 10 * kGi), .assigned = {before}}).score == 63);
}

TEST_CASE("upstream TestScore pod kinds") {
  // "score batch Pod": priority 5000, batch-cpu 16000 and batch-memory 32 GiB: the same
  // 13600m / 22.4 GiB -> 90.
  PodInput batch =
      PodBuilder("default", "test-pod-1")
          .Priority(5000)
          .Container(
              {{"kubernetes.io/batch-cpu", 16000}, {"kubernetes.io/batch-memory", 32 * kGi}},
              {{"kubernetes.io/batch-cpu", 16000}, {"kubernetes.io/batch-memory", 32 * kGi}});
  CHECK(Score({.metric = Usage(0, 0), .pod = batch}).score == 90);
  // "score request less than limit": requests 8 / 16 GiB, limits 16 / 32 GiB: the limit is
  // estimated -> 90.
  PodInput burst = PodBuilder("default", "test-pod-1")
                       .Container(CpuMem(Cores(8), 16 * kGi), CpuMem(Cores(16), 32 * kGi));
  CHECK(Score({.metric = Usage(0, 0), .pod = burst}).score == 90);
  // "score empty pod": a container without resources is BestEffort (batch): 250m and 200 MiB;
  // cpu 95750 * 100 / 96000 = 99.7 -> 99; memory 99.96 -> 99 -> 99.
  PodInput empty = PodBuilder("default", "test-pod-1").Container({}, {});
  CHECK(Score({.metric = Usage(0, 0), .pod = empty}).score == 99);
}

TEST_CASE("upstream TestScore prod pod") {
  // "score prod Pod", scoreAccordingProdUsage: prod usage is the assigned prod pod's reported
  // 30 cores and 100 GiB (its estimate is below that: no delta). The new prod pod asks 16000
  // cores: 13600000m > 96000m -> cpu 0; memory 100 + 22.4 GiB -> 76.1 -> 76; (0 + 76) / 2 = 38.
  LoadAwareArgs args;
  args.score_according_prod_usage = true;
  MetricBuilder m = Usage(0, 0);
  m.Pod("default", "assign-prod-pod-1", "koord-prod", CpuMem(Cores(30), 100 * kGi));
  PodInput assigned = Pod16("assign-prod-pod-1");
  assigned.priority = 9999;
  PodInput pod = PodBuilder("default", "prod-pod-1")
                     .Priority(9999)
                     .Container(CpuMem(Cores(16000), 32 * kGi), CpuMem(Cores(16000), 32 * kGi));
  CHECK(Score({.args = args, .metric = m, .assigned = {assigned}, .pod = pod}).score == 38);
}

TEST_CASE("upstream TestScore dominant resource weight") {
  // "score with drf": dominantResourceWeight 10 leaves resourceWeights undefaulted (empty):
  // only the dominant term counts, min(85, 95) * 10 / 10 = 85.
  LoadAwareArgs args;
  args.dominant_resource_weight = 10;
  CHECK(Score({.args = args, .metric = Usage(0, 0)}).score == 85);
  // With weights 1/1 as well: (85 + 95 + 85 * 10) / 12 = 1030 / 12 = 85.8 -> 85.
  args.resource_weights = {{"cpu", 1}, {"memory", 1}};
  CHECK(Score({.args = args, .metric = Usage(0, 0)}).score == 85);
}

// ---- The formula's corners --------------------------------------------------------------------

TEST_CASE("leastUsedScore truncates and is 0 above capacity or without capacity") {
  CHECK(LeastUsedScore(0, 96000) == 100);
  CHECK(LeastUsedScore(13600, 96000) == 85);  // 85.83
  CHECK(LeastUsedScore(96000, 96000) == 0);
  CHECK(LeastUsedScore(96001, 96000) == 0);
  CHECK(LeastUsedScore(5, 0) == 0);
  CHECK(LeastUsedScore(1, 3) == 66);  // 200 / 3 = 66.7
}

TEST_CASE("loadAwareSchedulingScorer weights and dominant term") {
  ResourceVector alloc{96000, 100, 0};  // cpu, memory, an extended resource the node lacks
  ResourceVector used{48000, 10, 0};    // cpu 50, memory 90, extended 0 (no capacity)
  // Weights cpu 3, memory 1: (50 * 3 + 90) / 4 = 60.
  CHECK(LoadAwareScore(0, ResourceVector{3, 1, 0}, used, alloc, 2) == 60);
  // Dominant weight 2 over cpu and memory only: (150 + 90 + 50 * 2) / 6 = 56.7 -> 56.
  CHECK(LoadAwareScore(2, ResourceVector{3, 1, 0}, used, alloc, 2) == 56);
  // The minimum runs over every vectorized resource, weighted or not: with the capacity-less
  // third resource it is 0: (150 + 90 + 0) / 6 = 40.
  CHECK(LoadAwareScore(2, ResourceVector{3, 1, 0}, used, alloc, 3) == 40);
  // No weight at all: 0.
  CHECK(LoadAwareScore(0, ResourceVector{}, used, alloc, 2) == 0);
}

TEST_CASE("scoring is off without any weight") {
  // Arguments used without SetDefaults: no resource weight and no dominant weight, so
  // scoreWeights is nil and every node scores 0 whatever its load.
  auto cache = MakeCache(LoadAwareArgs{});
  cache->UpsertNode(Node96());
  cache->UpsertNodeMetric(Usage(Cores(10), 0));
  NodeScore s = ScoreOne(*cache, Pod16());
  CHECK(s.path == ScorePath::kScoringOff);
  CHECK(s.score == 0);
}

TEST_CASE("a node the pod overfills scores 0 on that resource") {
  // cpu: 90 cores used + 13600m > 96000m -> 0; memory 95 -> (0 + 95) / 2 = 47.
  CHECK(Score({.metric = Usage(Cores(90), 0)}).score == 47);
}

}  // namespace
}  // namespace qrm::cluster::loadaware::testing
