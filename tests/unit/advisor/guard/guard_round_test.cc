// One decision round against hand-computed cases: consecutive thresholds, restore below the
// margin, missing and stale metrics, candidate selection, throttle-evict's remainder, action
// priorities, metrics that cannot be quantified, Preview and the eviction cool-down.
#include "advisor/guard/guard_round.h"

#include <cmath>

#include <catch2/catch.hpp>

#include "advisor/guard/eviction_walk.h"

namespace qrm::advisor::guard {
namespace {

constexpr double kCores = 10;
constexpr double kMemory = 64e9;

GuardPod Pod(const std::string& name, std::optional<double> cpu,
             const std::string& qos = "reclaimed_cores", std::optional<double> limit = std::nullopt,
             double request = 0, const std::string& ns = "ns") {
  GuardPod p;
  p.candidate.pod_uid = "uid-" + ns + "-" + name;
  p.candidate.pod_namespace = ns;
  p.candidate.pod_name = name;
  p.candidate.cpu_usage = cpu;
  p.candidate.cpu_limit = limit;
  p.candidate.cpu_request = request;
  p.qos_level = qos;
  return p;
}

ObjectiveEnsurance Rule(const std::string& metric, double watermark, GuardAction action,
                        int avoidance = 1) {
  ObjectiveEnsurance e;
  e.name = metric + "-rule";
  e.metric = metric;
  e.watermark = Level{watermark, false};
  e.action = action;
  e.avoidance_threshold = avoidance;
  return e;
}

GuardPolicy PolicyOf(std::vector<ObjectiveEnsurance> rules) {
  GuardPolicy p;
  p.ensurances = std::move(rules);
  return p;
}

// The node at `now` with a fresh CPU sample (and a memory one when given).
RoundInput Node(int64_t now, std::optional<double> cpu, std::vector<GuardPod> pods,
                std::optional<double> memory = std::nullopt) {
  RoundInput in;
  in.now_s = now;
  if (cpu) in.samples["cpu_total_usage"] = {*cpu, now};
  if (memory) in.samples["memory_total_usage"] = {*memory, now};
  in.capacity = {{"cpu_total_usage", kCores}, {"memory_total_usage", kMemory}};
  in.pods = std::move(pods);
  return in;
}

// Evicts everything it is asked to, and remembers whom.
struct AcceptingEvictor : Evictor {
  std::vector<std::string> asked;
  EvictOutcome Evict(const GuardCandidate& pod) override {
    asked.push_back(pod.Key());
    return EvictOutcome::kEvicted;
  }
};

TEST_CASE("avoidance threshold 2 acts on the second breaching sample only and a dip resets",
          "[advisor][guard][round]") {
  const GuardPolicy policy = PolicyOf({Rule("cpu_total_usage", 8, GuardAction::kThrottle, 2)});
  const std::vector<GuardPod> pods = {Pod("a", 3.0)};
  GuardState state;
  GuardDecision d = DecideRound(policy, Node(1, 9, pods), state);
  CHECK(d.ensurances[0].above == 1);
  CHECK_FALSE(d.ensurances[0].fired);
  CHECK(d.quota_changes.empty());
  d = DecideRound(policy, Node(2, 9, pods), state);
  CHECK(d.ensurances[0].fired);
  REQUIRE(d.quota_changes.size() == 1);
  CHECK(d.quota_changes[0].pod == "ns/a");
  // The same sample again (a round between two samples): not counted, no second action.
  RoundInput again = Node(3, 9, pods);
  again.samples["cpu_total_usage"].time_s = 2;
  d = DecideRound(policy, again, state);
  CHECK_FALSE(d.ensurances[0].counted);
  CHECK(d.quota_changes.empty());
  // A dip below the watermark resets: the next breach needs two samples again.
  d = DecideRound(policy, Node(4, 7.9, pods), state);
  CHECK(d.ensurances[0].above == 0);
  d = DecideRound(policy, Node(5, 9, pods), state);
  CHECK(d.ensurances[0].above == 1);
  CHECK(d.quota_changes.empty());
  d = DecideRound(policy, Node(6, 9, pods), state);
  CHECK(d.ensurances[0].fired);
  CHECK(d.quota_changes.size() == 1);
}

TEST_CASE("restore waits for restoreThreshold samples below the watermark minus the margin",
          "[advisor][guard][round]") {
  ObjectiveEnsurance rule = Rule("cpu_total_usage", 8, GuardAction::kThrottle);
  rule.restore_threshold = 2;
  rule.restore_margin = Level{10, true};  // 10 % of 10 cores: restore below 7 cores
  const GuardPolicy policy = PolicyOf({rule});
  const std::vector<GuardPod> pods = {Pod("a", 3.0, "reclaimed_cores", 4.0)};
  GuardState state;
  GuardDecision d = DecideRound(policy, Node(1, 9, pods), state);
  REQUIRE(d.quota_changes.size() == 1);
  const double quota = *d.quota_changes[0].to;
  CHECK(state.throttled.at("ns/a").quota == Approx(quota));
  // Between 7 and 8: not below the margin, never a restore; it also clears the count.
  const double usages[] = {7.5, 6, 7.5, 6};
  for (int i = 0; i < 4; ++i) {
    d = DecideRound(policy, Node(2 + i, usages[i], pods), state);
    CHECK(d.quota_changes.empty());
  }
  CHECK(d.ensurances[0].below == 1);
  CHECK(d.ensurances[0].restore_below == Approx(7));
  d = DecideRound(policy, Node(6, 6, pods), state);
  CHECK(d.ensurances[0].below == 2);
  REQUIRE(d.quota_changes.size() == 1);
  CHECK(*d.quota_changes[0].from == Approx(quota));
  CHECK(*d.quota_changes[0].to == Approx(quota * 1.1));
}

TEST_CASE("restore touches only the throttles the guard holds and forgets pods that are gone",
          "[advisor][guard][round]") {
  const GuardPolicy policy = PolicyOf({Rule("cpu_total_usage", 8, GuardAction::kThrottle)});
  GuardPod held_elsewhere = Pod("b", 1.0);
  held_elsewhere.candidate.cpu_quota = 1.0;  // a quota the guard did not set
  GuardState state;
  (void)DecideRound(policy, Node(1, 9, {Pod("a", 3.0), held_elsewhere}), state);
  REQUIRE(state.throttled.count("ns/a") == 1);
  GuardDecision d = DecideRound(policy, Node(2, 5, {Pod("a", 2.7), held_elsewhere}), state);
  REQUIRE(d.quota_changes.size() == 1);
  CHECK(d.quota_changes[0].pod == "ns/a");
  // "a" is gone: its throttle is forgotten, nothing is restored for it.
  d = DecideRound(policy, Node(3, 5, {held_elsewhere}), state);
  CHECK(state.throttled.empty());
  CHECK(d.quota_changes.empty());
}

TEST_CASE("a missing metric touches nobody and is reported missing", "[advisor][guard][round]") {
  const GuardPolicy policy = PolicyOf({Rule("cpu_total_usage", 8, GuardAction::kThrottleThenEvict),
                                       Rule("memory_total_usage", 32e9, GuardAction::kEvict, 2)});
  GuardPod a = Pod("a", 3.0);
  a.candidate.memory_usage = 8e9;
  GuardState state;
  // Memory breaching once, then no memory sample for two rounds, then breaching again.
  GuardDecision d = DecideRound(policy, Node(1, 5, {a}, 40e9), state);
  CHECK(d.ensurances[1].above == 1);
  d = DecideRound(policy, Node(2, 5, {a}), state);
  CHECK(d.missing_metrics == std::vector<std::string>{"memory_total_usage"});
  CHECK(d.newly_missing_metrics == std::vector<std::string>{"memory_total_usage"});
  CHECK(d.ensurances[1].missing);
  CHECK(d.ensurances[1].above == 0);  // the hits are no longer consecutive
  CHECK(d.evictions.empty());
  CHECK(d.quota_changes.empty());
  d = DecideRound(policy, Node(3, 5, {a}), state);
  CHECK(d.missing_metrics.size() == 1);
  CHECK(d.newly_missing_metrics.empty());  // one warning, on the transition
  d = DecideRound(policy, Node(4, 5, {a}, 40e9), state);
  CHECK(d.missing_metrics.empty());
  CHECK(d.ensurances[1].above == 1);
  CHECK(d.evictions.empty());
}

TEST_CASE("a stale sample counts as missing", "[advisor][guard][round]") {
  const GuardPolicy policy = PolicyOf({Rule("cpu_total_usage", 8, GuardAction::kThrottle)});
  RoundInput in = Node(100, 9.5, {Pod("a", 3.0)});
  in.samples["cpu_total_usage"].time_s = 94;  // stale after 5 s
  GuardState state;
  GuardDecision d = DecideRound(policy, in, state);
  CHECK(d.ensurances[0].missing);
  CHECK(d.missing_metrics == std::vector<std::string>{"cpu_total_usage"});
  CHECK(d.quota_changes.empty());
  CHECK(state.throttled.empty());
  in.samples["cpu_total_usage"].time_s = 95;  // 5 s old: still fresh
  d = DecideRound(policy, in, state);
  CHECK_FALSE(d.ensurances[0].missing);
  CHECK(d.quota_changes.size() == 1);
}

TEST_CASE("candidates exclude dedicated and system pods and the skip list", "[advisor][guard]") {
  const std::vector<GuardPod> pods = {
      Pod("r", 1.0),
      Pod("s", 1.0, "shared_cores"),
      Pod("d", 1.0, "dedicated_cores"),
      Pod("sys", 1.0, "system_cores"),
      Pod("unknown", 1.0, ""),
      Pod("dns", 1.0, "reclaimed_cores", std::nullopt, 0, "kube-system"),
      Pod("db", 1.0, "shared_cores", std::nullopt, 0, "default"),
  };
  CandidateOptions options;
  options.skip = {"kube-system/*", "default/db"};
  std::vector<GuardCandidate> c = SelectCandidates(pods, options);
  REQUIRE(c.size() == 1);
  CHECK(c[0].Key() == "ns/r");
  CHECK(c[0].cls == CandidateClass::kReclaimed);
  options.shared_cores = true;
  c = SelectCandidates(pods, options);
  REQUIRE(c.size() == 2);
  CHECK(c[1].Key() == "ns/s");
  CHECK(c[1].cls == CandidateClass::kShared);
  // A breach with only pods that may not be touched: nothing happens.
  GuardPolicy policy = PolicyOf({Rule("cpu_total_usage", 8, GuardAction::kThrottleThenEvict)});
  policy.candidates.skip = options.skip;  // shared_cores pods not candidates
  GuardState state;
  GuardDecision d = DecideRound(policy, Node(1, 9, {pods[1], pods[2], pods[3], pods[5]}), state);
  CHECK(d.ensurances[0].fired);
  CHECK(d.quota_changes.empty());
  REQUIRE(d.evictions.size() == 1);  // the gap is reported: nobody may give way
  CHECK(d.evictions[0].candidates.empty());
}

TEST_CASE("throttle-evict evicts only for what throttling could not close",
          "[advisor][guard][round]") {
  // Gap 1.5: "a" (floor = its request 2.5) releases 0.5; "b" is at its floor already.
  const std::vector<GuardPod> pods = {Pod("a", 3.0, "reclaimed_cores", 4.0, 2.5),
                                      Pod("b", 2.0, "reclaimed_cores", 4.0, 2.0)};
  GuardState state;
  GuardDecision d =
      DecideRound(PolicyOf({Rule("cpu_total_usage", 8, GuardAction::kThrottleThenEvict)}),
                  Node(1, 9.5, pods), state);
  REQUIRE(d.quota_changes.size() == 1);
  CHECK(*d.quota_changes[0].to == Approx(2.5));
  REQUIRE(d.evictions.size() == 1);
  const EvictionPlan& plan = d.evictions[0];
  CHECK(plan.gap == Approx(1.0));
  CHECK(plan.max_pods == 5);
  REQUIRE(plan.candidates.size() == 2);
  CHECK(plan.candidates[0].pod.Key() == "ns/a");
  CHECK(plan.candidates[0].release == Approx(2.5));  // at most its new quota
  CHECK(plan.candidates[1].release == Approx(2.0));
  // Every pod at its floor: the whole gap goes to eviction; "throttle" alone never evicts.
  GuardState floored;
  d = DecideRound(PolicyOf({Rule("cpu_total_usage", 8, GuardAction::kThrottleThenEvict)}),
                  Node(1, 9.5, {pods[1]}), floored);
  CHECK(d.quota_changes.empty());
  REQUIRE(d.evictions.size() == 1);
  CHECK(d.evictions[0].gap == Approx(1.5));
  GuardState throttle_only;
  d = DecideRound(PolicyOf({Rule("cpu_total_usage", 8, GuardAction::kThrottle)}),
                  Node(1, 9.5, {pods[1]}), throttle_only);
  CHECK(d.evictions.empty());
}

TEST_CASE("several breaching metrics act by action priority", "[advisor][guard][round]") {
  const GuardPolicy policy = PolicyOf({Rule("cpu_total_usage", 8, GuardAction::kEvict),
                                       Rule("memory_total_usage", 32e9, GuardAction::kEvict)});
  GuardPod a = Pod("a", 3.0), b = Pod("b", 1.0);
  a.candidate.memory_usage = 2e9;
  b.candidate.memory_usage = 10e9;
  GuardState state;
  const GuardDecision d = DecideRound(policy, Node(1, 9, {a, b}, 40e9), state);
  REQUIRE(d.evictions.size() == 2);
  CHECK(d.evictions[0].metric == "memory_total_usage");  // priority 7 before cpu's 5
  CHECK(d.evictions[0].candidates[0].pod.Key() == "ns/b");
  CHECK(d.evictions[0].gap == Approx(8e9));
  CHECK(d.evictions[1].metric == "cpu_total_usage");
  CHECK(d.evictions[1].candidates[0].pod.Key() == "ns/a");
}

TEST_CASE("an eviction plan lists four candidates per pod it may evict",
          "[advisor][guard][round]") {
  GuardPolicy policy = PolicyOf({Rule("cpu_total_usage", 8, GuardAction::kEvict)});
  policy.eviction.max_pods_per_round = 2;
  std::vector<GuardPod> pods;
  for (int i = 0; i < 30; ++i) pods.push_back(Pod("p" + std::to_string(i), 0.01 * (i + 1)));
  GuardState state;
  const GuardDecision d = DecideRound(policy, Node(1, 9, pods), state);
  REQUIRE(d.evictions.size() == 1);
  // Room for 429s, but one round never asks about every pod; the highest usage first.
  REQUIRE(d.evictions[0].candidates.size() == 8);
  CHECK(d.evictions[0].candidates[0].pod.Key() == "ns/p29");
  CHECK(d.evictions[0].candidates[7].pod.Key() == "ns/p22");
}

// The real registry plus a metric whose releases cannot be counted.
std::vector<GuardMetric> RegistryWithUnquantified() {
  std::vector<GuardMetric> registry = Metrics();
  GuardMetric io;
  io.name = "io_pressure";
  io.action_priority = 9;
  io.throttleable = io.evictable = true;  // neither quantified
  io.order = GeneralOrder();
  registry.push_back(io);
  return registry;
}

TEST_CASE("a metric that cannot be quantified acts on the highest-priority quantified one only",
          "[advisor][guard][round]") {
  const std::vector<GuardMetric> registry = RegistryWithUnquantified();
  GuardPolicy policy = PolicyOf({Rule("io_pressure", 0.5, GuardAction::kEvict)});
  policy.eviction.max_pods_per_round = 2;
  std::vector<GuardPod> pods;
  for (int i = 0; i < 5; ++i) {
    pods.push_back(Pod("p" + std::to_string(i), 1.0 + i));
    pods.back().candidate.memory_usage = 1e9 * (i + 1);
  }
  RoundInput in = Node(1, 5, pods);
  in.samples["io_pressure"] = {0.9, 1};
  GuardState state;
  GuardDecision d = DecideRound(policy, in, state, {}, registry);
  REQUIRE(d.evictions.size() == 1);
  CHECK(d.evictions[0].metric == "memory_total_usage");  // the highest quantified priority
  CHECK_FALSE(d.evictions[0].quantified);
  CHECK(std::isinf(d.evictions[0].gap));
  AcceptingEvictor evictor;
  const EvictionReport report = RunEvictionWalk(d.evictions, evictor, state, 1);
  CHECK(evictor.asked == std::vector<std::string>{"ns/p4", "ns/p3"});  // bounded at 2
  CHECK(report.plans[0].stop == WalkStop::kMaxPods);
  // Throttle: each of at most 2 pods lowered by one step, in the CPU order.
  policy = PolicyOf({Rule("io_pressure", 0.5, GuardAction::kThrottle)});
  policy.eviction.max_pods_per_round = 2;
  GuardState fresh;
  d = DecideRound(policy, in, fresh, {}, registry);
  REQUIRE(d.quota_changes.size() == 2);
  CHECK(d.quota_changes[0].pod == "ns/p4");
  CHECK(*d.quota_changes[0].to == Approx(5.0 * 0.9));
  CHECK(d.evictions.empty());
}

TEST_CASE("a Preview ensurance plans but does not change the state", "[advisor][guard][round]") {
  ObjectiveEnsurance rule = Rule("cpu_total_usage", 8, GuardAction::kThrottleThenEvict);
  rule.strategy = Strategy::kPreview;
  const std::vector<GuardPod> pods = {Pod("a", 3.0, "reclaimed_cores", 4.0, 2.5)};
  GuardState state;
  state.last_eviction_s = 0;  // a cool-down does not hold a preview
  const GuardDecision d = DecideRound(PolicyOf({rule}), Node(1, 9.5, pods), state);
  CHECK(d.ensurances[0].preview);
  CHECK(d.ensurances[0].fired);
  CHECK(d.quota_changes.empty());
  REQUIRE(d.preview_quota_changes.size() == 1);
  CHECK(*d.preview_quota_changes[0].to == Approx(2.5));
  REQUIRE(d.evictions.size() == 1);
  CHECK(d.evictions[0].preview);
  CHECK(d.evictions[0].gap == Approx(1.0));
  CHECK(state.throttled.empty());
  CHECK(state.sequence == 0);
  // The walk previews it: nobody is asked, nothing is recorded.
  AcceptingEvictor evictor;
  const EvictionReport report = RunEvictionWalk(d.evictions, evictor, state, 1);
  CHECK(evictor.asked.empty());
  REQUIRE(report.attempts.size() == 1);
  CHECK(report.attempts[0].preview);
  CHECK(state.excluded.empty());
  CHECK(*state.last_eviction_s == 0);
}

TEST_CASE("the cool-down blocks a second eviction round", "[advisor][guard][round]") {
  GuardPolicy policy = PolicyOf({Rule("cpu_total_usage", 8, GuardAction::kEvict)});
  policy.eviction.cool_down_s = 60;
  const std::vector<GuardPod> pods = {Pod("a", 1.5), Pod("b", 1.0)};
  GuardState state;
  AcceptingEvictor evictor;
  GuardDecision d = DecideRound(policy, Node(100, 9, pods), state);
  REQUIRE(d.evictions.size() == 1);
  (void)RunEvictionWalk(d.evictions, evictor, state, 100);
  CHECK(evictor.asked == std::vector<std::string>{"ns/a"});
  CHECK(*state.last_eviction_s == 100);
  d = DecideRound(policy, Node(159, 9, pods), state);
  CHECK(d.ensurances[0].fired);
  CHECK(d.eviction_cooling_down);
  CHECK(d.evictions.empty());
  // After the cool-down: "a" (evicted, terminating) is excluded; "b" is next.
  d = DecideRound(policy, Node(160, 9, pods), state);
  CHECK_FALSE(d.eviction_cooling_down);
  REQUIRE(d.evictions.size() == 1);
  REQUIRE(d.evictions[0].candidates.size() == 1);
  CHECK(d.evictions[0].candidates[0].pod.Key() == "ns/b");
}

}  // namespace
}  // namespace qrm::advisor::guard
