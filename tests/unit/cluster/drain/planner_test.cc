// The planner's pass: candidates and their order, destinations, hints from the previous pass,
// nodes being drained, recent evictions, group minimums, the time budget and bad options.
#include "cluster/drain/planner.h"

#include <catch2/catch.hpp>

#include "cluster/drain/plan_output.h"
#include "tests/unit/cluster/drain/planner_builders.h"

namespace qrm::cluster::drain {
namespace {

using Catch::Matchers::Contains;

Plan MustPlan(const ClusterSnapshot& s, const PlannerOptions& options = PlannerOptions(),
              const PlannerState& state = PlannerState(),
              const std::map<std::string, NumaNodeState>& numa = {}) {
  StatusOr<Plan> plan = MakePlan(s, numa, options, state);
  INFO(plan.status().ToString());
  REQUIRE(plan.ok());
  return *std::move(plan);
}

const NotDrainable* Why(const Plan& plan, const std::string& node) {
  for (const NotDrainable& n : plan.not_drainable)
    if (n.node == node) return &n;
  return nullptr;
}

// Three small nodes at 25 % and one big node at 75 %: the small ones go, one at a time, to
// the big one (fullest first); a node that received pods is not drained afterwards.
ClusterSnapshot ThreeSmallOneBig() {
  std::vector<DrainNode> nodes = {MakeNode("s1", 4, 16), MakeNode("s2", 4, 16),
                                  MakeNode("s3", 4, 16), MakeNode("big", 16, 64)};
  std::vector<DrainPod> pods = {MakePod("a", "s1", 1000, 1), MakePod("b", "s2", 1000, 1),
                                MakePod("c", "s3", 1000, 1), MakePod("base", "big", 12000, 8)};
  return MakeSnapshot(nodes, pods);
}

TEST_CASE("candidates go in utilisation order and pods to the fullest node") {
  PlannerOptions options;
  options.max_drain_parallelism = 2;
  const Plan plan = MustPlan(ThreeSmallOneBig(), options);
  REQUIRE(plan.candidates.size() == 3);
  for (const NodePlan& node : plan.candidates) {
    REQUIRE(node.moves.size() == 1);
    CHECK(node.moves[0].destination == "big");
    CHECK_FALSE(node.moves[0].numa_checked);  // big has no NUMA state
  }
  CHECK(plan.drain.size() == 2);  // max-drain-parallelism
  CHECK(plan.drain[0].node == "s1");
  CHECK(plan.destination_hints.at("s1").at("uid-a") == "big");
  REQUIRE(Why(plan, "big") != nullptr);
  CHECK(Why(plan, "big")->reason_code == "NotUnderutilized");
}

TEST_CASE("the same input gives the same plan") {
  const ClusterSnapshot s = ThreeSmallOneBig();
  const std::string first = PlanJson(MustPlan(s));
  for (int i = 0; i < 3; ++i) CHECK(PlanJson(MustPlan(s)) == first);
}

TEST_CASE("a destination hint from the previous pass is tried first") {
  ClusterSnapshot s = ThreeSmallOneBig();
  s.nodes.push_back(MakeNode("other", 16, 64));
  s.pods.push_back(MakePod("base2", "other", 11000, 8));  // a little less full than big
  s.Reindex();
  PlannerState state;
  state.destination_hints["s1"]["uid-a"] = "other";
  const Plan plan = MustPlan(s, PlannerOptions(), state);
  REQUIRE_FALSE(plan.candidates.empty());
  CHECK(plan.candidates[0].moves[0].destination == "other");
  CHECK(plan.candidates[0].moves[0].from_hint);
  // Without the hint, big (fuller) is first.
  CHECK(MustPlan(s).candidates[0].moves[0].destination == "big");
}

TEST_CASE("a node that received pods is not drained and a candidate receives none") {
  // Two 25 % nodes and nothing else: one goes to the other.
  ClusterSnapshot s = MakeSnapshot({MakeNode("x", 4, 16), MakeNode("y", 4, 16)},
                                   {MakePod("a", "x", 1000, 1), MakePod("b", "y", 1000, 1)});
  const Plan plan = MustPlan(s);
  REQUIRE(plan.candidates.size() == 1);
  CHECK(plan.candidates[0].node == "x");
  REQUIRE(Why(plan, "y") != nullptr);
  CHECK(Why(plan, "y")->kind == NotDrainableKind::kDestination);
}

TEST_CASE("a pod with no home keeps its node and the reason says why") {
  ClusterSnapshot s = MakeSnapshot({MakeNode("x", 4, 16), MakeNode("full", 4, 16)},
                                   {MakePod("a", "x", 2000, 1), MakePod("f", "full", 3000, 1)});
  const Plan plan = MustPlan(s);
  CHECK(plan.candidates.empty());
  const NotDrainable* why = Why(plan, "x");
  REQUIRE(why != nullptr);
  CHECK(why->kind == NotDrainableKind::kNoPlaceForPod);
  CHECK(why->reason_code == "NoPlaceToMovePods");
  CHECK(why->pod == "default/a");
  CHECK_THAT(why->reason, Contains("1 insufficient resources"));
}

TEST_CASE("the pods of a node being drained are placed first and limit the rest") {
  // d is being drained: its pod takes the room on big that s1's pod would have had.
  ClusterSnapshot s = MakeSnapshot(
      {MakeNode("d", 4, 16), MakeNode("s1", 4, 16), MakeNode("big", 8, 64)},
      {MakePod("dp", "d", 3000, 1), MakePod("a", "s1", 2000, 1), MakePod("base", "big", 5000, 40)});
  PlannerState state;
  state.deleted_nodes = {"d", "gone-already"};
  const Plan plan = MustPlan(s, PlannerOptions(), state);
  REQUIRE(plan.reinjected.size() == 1);
  CHECK(plan.reinjected[0].pod == "default/dp");
  CHECK(plan.reinjected[0].destination == "big");
  CHECK(plan.candidates.empty());
  CHECK(Why(plan, "d")->kind == NotDrainableKind::kBeingDeleted);
  CHECK(Why(plan, "s1")->kind == NotDrainableKind::kNoPlaceForPod);
  // The drain taint says the same without a state file.
  s.nodes[0].taints.push_back({"qrm.io/drain", "drain-planner", "NoSchedule"});
  CHECK(MustPlan(s).reinjected.size() == 1);
}

TEST_CASE("a node that takes pods of a node being drained is not drained itself") {
  ClusterSnapshot s = MakeSnapshot(
      {MakeNode("d", 4, 16), MakeNode("x", 4, 16), MakeNode("y", 4, 16)},
      {MakePod("dp", "d", 1000, 1), MakePod("xp", "x", 1000, 1), MakePod("yp", "y", 1000, 1)});
  PlannerState state;
  state.deleted_nodes = {"d"};
  const Plan plan = MustPlan(s, PlannerOptions(), state);
  REQUIRE(plan.reinjected.size() == 1);
  CHECK(plan.reinjected[0].destination == "x");
  REQUIRE(plan.candidates.size() == 1);
  CHECK(plan.candidates[0].node == "y");
  CHECK(Why(plan, "x")->kind == NotDrainableKind::kDestination);
}

TEST_CASE("no room for a node being drained means no candidates") {
  ClusterSnapshot s = MakeSnapshot({MakeNode("d", 4, 16), MakeNode("e", 4, 16)},
                                   {MakePod("dp", "d", 3000, 1), MakePod("ep", "e", 3000, 1)});
  PlannerState state;
  state.deleted_nodes = {"d"};
  const Plan plan = MustPlan(s, PlannerOptions(), state);
  CHECK(plan.candidates.empty());
  CHECK_THAT(plan.aborted, Contains("node d is being drained and no node can take pod default/dp"));
}

TEST_CASE("a recently evicted pod is placed until its replacement is bound") {
  ClusterSnapshot s = MakeSnapshot({MakeNode("x", 4, 16), MakeNode("big", 8, 64)},
                                   {MakePod("a", "x", 2000, 1), MakePod("base", "big", 5000, 40)});
  PlannerOptions options;
  options.now = 10000;
  PlannerState state;
  DrainPod evicted = MakePod("gone", "old-node", 2000, 1);
  state.recent_evictions.push_back({evicted, 9900});
  Plan plan = MustPlan(s, options, state);
  REQUIRE(plan.reinjected.size() == 1);
  CHECK(plan.reinjected[0].pod == "default/gone");
  CHECK(plan.candidates.empty());  // big has 1 CPU left after it: x's pod does not fit

  // Its replacement is bound (same controller, created after the eviction): nothing to place.
  DrainPod replacement = MakePod("new", "big", 2000, 1);
  replacement.creation_time = 9950;
  s.pods.push_back(replacement);
  s.pods[1].requests.cpu_milli = 3000;  // keep big's use as before
  s.Reindex();
  plan = MustPlan(s, options, state);
  CHECK(plan.reinjected.empty());
  // Outside the window it is forgotten.
  s.pods.pop_back();
  s.Reindex();
  options.now = 9900 + options.recent_eviction_window_seconds + 1;
  CHECK(MustPlan(s, options, state).reinjected.empty());
}

TEST_CASE("a node group keeps its minimum size across candidates") {
  ClusterSnapshot s = ThreeSmallOneBig();
  for (DrainNode& n : s.nodes) n.node_group = "pool";
  PlannerOptions options;
  options.eligibility.min_group_size["pool"] = 2;
  const Plan plan = MustPlan(s, options);
  CHECK(plan.candidates.size() == 2);  // 4 nodes, min 2
  REQUIRE(Why(plan, "s3") != nullptr);
  CHECK(Why(plan, "s3")->reason_code == "NodeGroupMinSizeReached");
}

TEST_CASE("candidates left when the time budget ends are reported") {
  PlannerOptions options;
  options.time_budget = std::chrono::milliseconds(1);
  ClusterSnapshot s = ThreeSmallOneBig();
  // Enough pods that the first candidates take longer than the budget.
  for (int i = 0; i < 3000; ++i) {
    s.nodes.push_back(MakeNode("t" + std::to_string(i), 4, 16));
    s.pods.push_back(MakePod("p" + std::to_string(i), "t" + std::to_string(i), 100, 1));
  }
  s.Reindex();
  const Plan plan = MustPlan(s, options);
  CHECK(plan.timed_out);
  CHECK(plan.nodes_evaluated < 3003);
  bool reported = false;
  for (const NotDrainable& n : plan.not_drainable)
    reported = reported || n.kind == NotDrainableKind::kNotEvaluated;
  CHECK(reported);
}

TEST_CASE("bad options and NUMA state of an unknown node are refused") {
  const ClusterSnapshot s = ThreeSmallOneBig();
  PlannerOptions options;
  options.max_drain_parallelism = -1;
  CHECK_THAT(MakePlan(s, {}, options).status().message(), Contains("max-drain-parallelism: -1"));
  options = PlannerOptions();
  options.eligibility.utilization_threshold = 1.5;
  CHECK_THAT(MakePlan(s, {}, options).status().message(), Contains("threshold: 1.5"));
  std::vector<NumaZone> zones(1);
  zones[0].cpu_milli = {1000, 1000};
  auto state =
      MakeNumaNodeState("ghost", zones, topology::Policy::kNone, topology::Scope::kContainer);
  REQUIRE(state.ok());
  CHECK_THAT(MakePlan(s, {{"ghost", *state}}, PlannerOptions()).status().message(),
             Contains("NUMA state of node ghost"));
}

}  // namespace
}  // namespace qrm::cluster::drain
