// The eviction walk against a scripted Evictor: a 429 moves on to the next candidate, the walk
// stops exactly at the gap or at the pod bound, errors are bounded, gone pods count, a pod
// evicted for one plan counts for the next, and the state records exclusions and the cool-down.
#include "advisor/guard/eviction_walk.h"

#include <map>

#include <catch2/catch.hpp>

namespace qrm::advisor::guard {
namespace {

// Answers from a script by pod key (evicted when not scripted) and records every call.
struct ScriptedEvictor : Evictor {
  std::map<std::string, EvictOutcome> script;
  std::vector<std::string> asked;
  EvictOutcome Evict(const GuardCandidate& pod) override {
    asked.push_back(pod.Key());
    const auto it = script.find(pod.Key());
    return it == script.end() ? EvictOutcome::kEvicted : it->second;
  }
};

EvictionCandidate Candidate(const std::string& name, double release) {
  EvictionCandidate c;
  c.pod.pod_uid = "uid-" + name;
  c.pod.pod_namespace = "ns";
  c.pod.pod_name = name;
  c.release = release;
  return c;
}

EvictionPlan Plan(double gap, int max_pods, std::vector<EvictionCandidate> candidates,
                  const std::string& metric = "cpu_total_usage") {
  EvictionPlan p;
  p.metric = metric;
  p.gap = gap;
  p.max_pods = max_pods;
  p.candidates = std::move(candidates);
  return p;
}

TEST_CASE("a 429 moves on to the next candidate and the walk stops exactly at the gap",
          "[advisor][guard][walk]") {
  ScriptedEvictor evictor;
  evictor.script["ns/a"] = EvictOutcome::kBlockedByBudget;
  GuardState state;
  const EvictionReport report = RunEvictionWalk(
      {Plan(3, 5, {Candidate("a", 2), Candidate("b", 2), Candidate("c", 1), Candidate("d", 5)})},
      evictor, state, 1000);
  CHECK(evictor.asked == std::vector<std::string>{"ns/a", "ns/b", "ns/c"});  // d untouched
  REQUIRE(report.attempts.size() == 3);
  CHECK(report.attempts[0].outcome == EvictOutcome::kBlockedByBudget);
  CHECK(report.attempts[0].released == 0);
  CHECK(report.attempts[2].released == 1);
  CHECK(report.evicted == 2);
  REQUIRE(report.plans.size() == 1);
  CHECK(report.plans[0].stop == WalkStop::kGapClosed);
  CHECK(report.plans[0].remaining == 0);
  CHECK(state.excluded.at("ns/a").reason == ExclusionReason::kRefused);
  CHECK(state.excluded.at("ns/a").until_s == 1060);
  CHECK(state.excluded.at("ns/b").reason == ExclusionReason::kEvicted);
  CHECK(state.excluded.at("ns/b").until_s == 1600);
  CHECK(state.excluded.count("ns/d") == 0);
  CHECK(*state.last_eviction_s == 1000);
}

TEST_CASE("the walk evicts at most max pods", "[advisor][guard][walk]") {
  ScriptedEvictor evictor;
  GuardState state;
  const EvictionReport report = RunEvictionWalk(
      {Plan(10, 2, {Candidate("a", 1), Candidate("b", 1), Candidate("c", 1)})}, evictor, state, 1);
  CHECK(evictor.asked == std::vector<std::string>{"ns/a", "ns/b"});
  CHECK(report.plans[0].stop == WalkStop::kMaxPods);
  CHECK(report.plans[0].remaining == Approx(8));
  CHECK(WalkStopName(report.plans[0].stop) == "max_pods");
}

TEST_CASE("errors move on and stop the walk at their bound without a cool-down",
          "[advisor][guard][walk]") {
  ScriptedEvictor evictor;
  for (const char* pod : {"ns/a", "ns/b", "ns/c", "ns/d"})
    evictor.script[pod] = EvictOutcome::kError;
  GuardState state;
  const EvictionReport report = RunEvictionWalk(
      {Plan(1, 5, {Candidate("a", 1), Candidate("b", 1), Candidate("c", 1), Candidate("d", 1)})},
      evictor, state, 1);
  CHECK(evictor.asked.size() == 3);  // max_errors_per_walk
  CHECK(report.errors == 3);
  CHECK(report.evicted == 0);
  CHECK(report.plans[0].stop == WalkStop::kTooManyErrors);
  CHECK(state.excluded.at("ns/a").reason == ExclusionReason::kFailed);
  CHECK_FALSE(state.last_eviction_s.has_value());  // nothing evicted: no cool-down
}

TEST_CASE("a gone pod counts as released but not as evicted", "[advisor][guard][walk]") {
  ScriptedEvictor evictor;
  evictor.script["ns/a"] = EvictOutcome::kGone;
  GuardState state;
  const EvictionReport report = RunEvictionWalk(
      {Plan(2, 1, {Candidate("a", 1), Candidate("b", 1), Candidate("c", 1)})}, evictor, state, 1);
  CHECK(evictor.asked == std::vector<std::string>{"ns/a", "ns/b"});
  CHECK(report.evicted == 1);
  CHECK(report.plans[0].stop == WalkStop::kGapClosed);
  CHECK(EvictOutcomeName(report.attempts[0].outcome) == "gone");
}

TEST_CASE("a pod evicted for one plan counts for the next and the bound is shared",
          "[advisor][guard][walk]") {
  ScriptedEvictor evictor;
  GuardState state;
  const std::vector<EvictionPlan> plans = {
      Plan(5e9, 2, {Candidate("big", 6e9), Candidate("small", 1e9)}, "memory_total_usage"),
      Plan(5, 2, {Candidate("cpu", 2), Candidate("other", 2), Candidate("big", 1)})};
  const EvictionReport report = RunEvictionWalk(plans, evictor, state, 1);
  // "big" released 1 core already: 4 left; "cpu" is evicted, then the bound (2 in all) holds.
  CHECK(evictor.asked == std::vector<std::string>{"ns/big", "ns/cpu"});
  REQUIRE(report.plans.size() == 2);
  CHECK(report.plans[0].stop == WalkStop::kGapClosed);
  CHECK(report.plans[1].stop == WalkStop::kMaxPods);
  CHECK(report.plans[1].remaining == Approx(2));
  CHECK(report.evicted == 2);
}

TEST_CASE("candidates with nothing left to walk report no candidates", "[advisor][guard][walk]") {
  ScriptedEvictor evictor;
  evictor.script["ns/a"] = EvictOutcome::kBlockedByBudget;
  GuardState state;
  const EvictionReport report =
      RunEvictionWalk({Plan(1, 5, {Candidate("a", 1)})}, evictor, state, 1);
  CHECK(report.plans[0].stop == WalkStop::kNoCandidates);
  CHECK(report.plans[0].remaining == 1);
  CHECK_FALSE(state.last_eviction_s.has_value());
}

}  // namespace
}  // namespace qrm::advisor::guard
