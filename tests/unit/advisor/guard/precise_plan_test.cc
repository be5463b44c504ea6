// The precise walks against hand-computed cases: gaps, a throttle that stops at the gap (the
// fewest pods at the front of the order), floors, restore newest first within the room,
// eviction of the minimal set, and the three Crane executor defects pinned as absent.
#include "advisor/guard/precise_plan.h"

#include <cmath>

#include <catch2/catch.hpp>

namespace qrm::advisor::guard {
namespace {

GuardCandidate Pod(const std::string& name, std::optional<double> cpu,
                   std::optional<double> limit = std::nullopt, double request = 0) {
  GuardCandidate c;
  c.pod_uid = "uid-" + name;
  c.pod_namespace = "ns";
  c.pod_name = name;
  c.cpu_usage = cpu;
  c.cpu_limit = limit;
  c.cpu_request = request;
  return c;
}

ThrottleOptions Step10() {
  ThrottleOptions o;  // 10 % steps, floor 10 % of the limit, not below the request
  return o;
}

TEST_CASE("gaps are measured from the latest usage and unknown usage has none",
          "[advisor][guard]") {
  CHECK(GapAbove(7.5, 6) == Approx(1.5));
  CHECK(GapAbove(5, 6) == 0);
  CHECK_FALSE(GapAbove(std::nullopt, 6).has_value());
  CHECK_FALSE(GapAbove(NAN, 6).has_value());
  CHECK(RoomBelow(4, 6, 1) == Approx(1));
  CHECK(RoomBelow(5.5, 6, 1) == 0);
  CHECK_FALSE(RoomBelow(std::nullopt, 6, 1).has_value());
}

TEST_CASE("throttle down stops as soon as the gap is closed", "[advisor][guard]") {
  const std::vector<GuardCandidate> sorted = {Pod("a", 3.0), Pod("b", 2.0), Pod("c", 1.0)};
  ThrottledPods throttled;
  uint64_t sequence = 0;
  // Gap 0.5: a's usage 3 must come to 2.5; steps of 10 % from 3: 2.7, 2.43.
  const QuotaPlan plan = PlanThrottleDown(sorted, 0.5, Step10(), throttled, sequence);
  REQUIRE(plan.changes.size() == 1);
  CHECK(plan.changes[0].pod == "ns/a");
  CHECK_FALSE(plan.changes[0].from.has_value());
  CHECK(*plan.changes[0].to == Approx(2.43));
  CHECK(plan.changes[0].released == Approx(0.57));
  CHECK(plan.remaining == 0);
  CHECK(throttled.size() == 1);
  CHECK(throttled.at("ns/a").ceiling == Approx(3.0));  // no limit: its usage when throttled
}

TEST_CASE("a pod taken to its floor leaves the rest of the gap to the next", "[advisor][guard]") {
  // a: usage 1, limit 2, request 0.5: floor max(10 % of 2, 0.5) = 0.5, releases 0.5.
  // b: the remaining 0.7 from usage 2 -> target 1.3: 5 steps, 2 x 0.9^5 = 1.18098.
  const std::vector<GuardCandidate> sorted = {Pod("a", 1.0, 2.0, 0.5), Pod("b", 2.0),
                                              Pod("c", 4.0)};
  ThrottledPods throttled;
  uint64_t sequence = 0;
  const QuotaPlan plan = PlanThrottleDown(sorted, 1.2, Step10(), throttled, sequence);
  REQUIRE(plan.changes.size() == 2);
  CHECK(*plan.changes[0].to == Approx(0.5));
  CHECK(plan.changes[0].released == Approx(0.5));
  CHECK(*plan.changes[1].to == Approx(2 * std::pow(0.9, 5)));
  CHECK(plan.remaining == 0);
  CHECK(throttled.count("ns/c") == 0);  // untouched
  CHECK(throttled.at("ns/b").sequence == 1);
}

TEST_CASE("the floor is min_cpu_ratio of the limit, as tested (Crane assigns a tenth of it)",
          "[advisor][guard]") {
  ThrottleOptions o = Step10();
  o.below_request = true;
  const GuardCandidate pod = Pod("a", 4.0, 4.0, 1.0);
  CHECK(QuotaFloor(pod, o) == Approx(0.4));
  ThrottledPods throttled;
  uint64_t sequence = 0;
  const QuotaPlan plan = PlanThrottleDown({pod}, 100, o, throttled, sequence);
  REQUIRE(plan.changes.size() == 1);
  CHECK(*plan.changes[0].to == Approx(0.4));
  o.below_request = false;
  CHECK(QuotaFloor(pod, o) == Approx(1.0));
  CHECK(QuotaFloor(Pod("tiny", 0.001), o) == Approx(0.01));
}

TEST_CASE("a pod without a usage sample is never acted on", "[advisor][guard]") {
  ThrottledPods throttled;
  uint64_t sequence = 0;
  const QuotaPlan plan = PlanThrottleDown({Pod("unknown", std::nullopt), Pod("idle", 0.0)}, 1,
                                          Step10(), throttled, sequence);
  CHECK(plan.changes.empty());
  CHECK(plan.remaining == 1);
  CHECK(throttled.empty());
  const EvictPlan evict = PlanEviction({Pod("unknown", std::nullopt), Pod("idle", 0.0)},
                                       *FindMetric("cpu_total_usage"), 1, 5);
  CHECK(evict.pods.empty());
}

TEST_CASE("a throttled pod is lowered from its quota on the next round", "[advisor][guard]") {
  ThrottledPods throttled;
  uint64_t sequence = 0;
  (void)PlanThrottleDown({Pod("a", 3.0)}, 0.2, Step10(), throttled, sequence);  // 2.7
  REQUIRE(throttled.at("ns/a").quota == Approx(2.7));
  // It still uses its whole quota; the gap is 0.25 again: 2.7 -> 2.43.
  const QuotaPlan plan = PlanThrottleDown({Pod("a", 2.7)}, 0.25, Step10(), throttled, sequence);
  REQUIRE(plan.changes.size() == 1);
  CHECK(*plan.changes[0].from == Approx(2.7));
  CHECK(*plan.changes[0].to == Approx(2.43));
  CHECK(throttled.at("ns/a").sequence == 0);  // still its first throttling
  CHECK(throttled.at("ns/a").ceiling == Approx(3.0));
}

TEST_CASE("restore walks the throttled pods newest first and only within the room",
          "[advisor][guard]") {
  ThrottledPods throttled;
  uint64_t sequence = 0;
  (void)PlanThrottleDown({Pod("old", 2.0, 2.0)}, 0.2, Step10(), throttled, sequence);  // 1.8
  (void)PlanThrottleDown({Pod("new", 4.0, 4.0)}, 0.4, Step10(), throttled, sequence);  // 3.6
  // A step of "new" lets back 0.36; with room 0.3 nothing fits: the order holds, "old" waits.
  QuotaPlan none = PlanRestore(0.3, Step10(), throttled);
  CHECK(none.changes.empty());
  // Room 0.6: "new" 3.6 -> 3.96 (0.36), then "old" 1.8 -> 1.98 (0.18).
  QuotaPlan both = PlanRestore(0.6, Step10(), throttled);
  REQUIRE(both.changes.size() == 2);
  CHECK(both.changes[0].pod == "ns/new");
  CHECK(*both.changes[0].to == Approx(3.96));
  CHECK(both.changes[1].pod == "ns/old");
  CHECK(both.remaining == Approx(0.06));
  // Next steps reach the limits: released, no quota.
  QuotaPlan release = PlanRestore(10, Step10(), throttled);
  REQUIRE(release.changes.size() == 2);
  CHECK_FALSE(release.changes[0].to.has_value());
  CHECK(release.changes[0].released == Approx(0.04));
  CHECK(throttled.empty());
}

TEST_CASE("a restore room never overwrites a throttle-down gap (Crane's third defect)",
          "[advisor][guard]") {
  ThrottledPods throttled;
  uint64_t sequence = 0;
  (void)PlanThrottleDown({Pod("a", 3.0)}, 0.2, Step10(), throttled, sequence);
  // Another ensurance has room to restore while this one is breached: each walk has its own.
  (void)PlanRestore(0, Step10(), throttled);
  const QuotaPlan down =
      PlanThrottleDown({Pod("a", 2.7), Pod("b", 2.0)}, 0.5, Step10(), throttled, sequence);
  CHECK_FALSE(down.changes.empty());
  CHECK(down.remaining == 0);
}

TEST_CASE("eviction picks the minimal set in order and moves past refused pods",
          "[advisor][guard]") {
  const GuardMetric& cpu = *FindMetric("cpu_total_usage");
  const std::vector<GuardCandidate> sorted = {Pod("a", 3.0), Pod("b", 2.0), Pod("c", 1.0)};
  EvictPlan plan = PlanEviction(sorted, cpu, 4, 5);
  CHECK(plan.pods == std::vector<std::string>{"ns/a", "ns/b"});
  CHECK(plan.remaining == 0);
  // "a" answered 429 (its PodDisruptionBudget): the next ones are taken instead.
  plan = PlanEviction(sorted, cpu, 4, 5, {"ns/a"});
  CHECK(plan.pods == std::vector<std::string>{"ns/b", "ns/c"});
  CHECK(plan.remaining == Approx(1));
  // The bound on one round.
  plan = PlanEviction(sorted, cpu, 4, 1);
  CHECK(plan.pods == std::vector<std::string>{"ns/a"});
  CHECK(plan.remaining == Approx(1));
  // Memory: released = the working set.
  auto heavy = Pod("heavy", 0.1);
  heavy.memory_usage = 6e9;
  plan = PlanEviction({heavy}, *FindMetric("memory_total_usage"), 5e9, 5);
  CHECK(plan.pods == std::vector<std::string>{"ns/heavy"});
}

}  // namespace
}  // namespace qrm::advisor::guard
