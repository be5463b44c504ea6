// The planner on the fixture clusters of the issue: a NUMA-blind plan that strands dedicated
// pods where qrm's plan strands none; PDBs that limit the set; empty nodes first.
#include <catch2/catch.hpp>

#include "cluster/drain/numa_inputs.h"
#include "cluster/drain/plan_output.h"
#include "cluster/drain/planner.h"
#include "tests/unit/cluster/drain/fixtures.h"
#include "tests/unit/cluster/drain/plan_replay.h"

namespace qrm::cluster::drain {
namespace {

using Catch::Matchers::Contains;

constexpr int64_t kNow = 1795939200;  // 2026-11-27T00:00:00Z

struct Input {
  ClusterSnapshot snapshot;
  std::map<std::string, NumaNodeState> numa;
};

Input StrandFixture() {
  Input in;
  in.snapshot = MustDecode({Fixture("strand-cluster.json")});
  auto numa = DecodeNumaStates({Fixture("strand-nrt.json")});
  INFO(numa.status().ToString());
  REQUIRE(numa.ok());
  in.numa = *std::move(numa);
  return in;
}

PlannerOptions Options(bool numa_blind) {
  PlannerOptions o;
  o.now = kNow;
  o.numa_blind = numa_blind;
  o.max_drain_parallelism = 10;
  return o;
}

Plan MustPlan(const Input& in, const PlannerOptions& options) {
  StatusOr<Plan> plan = MakePlan(in.snapshot, in.numa, options);
  INFO(plan.status().ToString());
  REQUIRE(plan.ok());
  return *std::move(plan);
}

std::vector<std::string> Nodes(const std::vector<NodePlan>& plans) {
  std::vector<std::string> out;
  for (const NodePlan& p : plans) out.push_back(p.node);
  return out;
}

// Nodes whose every pod the destination's kubelet would admit.
size_t SafelyDrained(const Plan& plan) {
  size_t n = 0;
  for (const NodePlan& node : plan.drain) {
    bool safe = true;
    for (const StrandedPod& s : plan.stranded) safe = safe && s.source != node.node;
    n += safe;
  }
  return n;
}

TEST_CASE("the NUMA-blind plan strands a dedicated pod that qrm's plan places") {
  const Input in = StrandFixture();
  const Plan blind = MustPlan(in, Options(true));
  const Plan qrm = MustPlan(in, Options(false));

  CHECK(Nodes(blind.drain) == std::vector<std::string>{"src-1", "src-2"});
  REQUIRE(blind.stranded.size() == 1);
  CHECK(blind.stranded[0].pod == "default/db-1");
  CHECK(blind.stranded[0].source == "src-1");
  CHECK(blind.stranded[0].destination == "dst-split");
  CHECK(blind.stranded[0].reason == "TopologyAffinityError");
  CHECK_THAT(blind.stranded[0].message, Contains("dst-split"));

  CHECK(Nodes(qrm.drain) == std::vector<std::string>{"src-1", "src-2"});
  CHECK(qrm.stranded.empty());
  CHECK(ReplayPlan(in.snapshot, in.numa, qrm, Options(false)).empty());
  CHECK_FALSE(ReplayPlan(in.snapshot, in.numa, blind, Options(true)).empty());
  CHECK(SafelyDrained(qrm) >= SafelyDrained(blind));
  for (const NodePlan& node : qrm.drain) {
    for (const PodMove& move : node.moves) {
      INFO(move.pod);
      CHECK(move.destination != "dst-split");  // neither db pod nor the web pods after them
      CHECK(move.numa_checked);
    }
  }
  // Each NUMA-bound pod is within one zone of dst-whole.
  std::vector<NumaMask> db_zones;
  for (const NodePlan& node : qrm.drain)
    for (const PodMove& move : node.moves)
      if (move.pod.find("db-") != std::string::npos) db_zones.push_back(move.numa);
  REQUIRE(db_zones.size() == 2);
  CHECK(db_zones[0].Count() == 1);
  CHECK(db_zones[1].Count() == 1);
  // Both plans use the db PDB's two disruptions.
  REQUIRE(qrm.pdb_use.size() == 1);
  CHECK(qrm.pdb_use[0].pdb == "default/db");
  CHECK(qrm.pdb_use[0].used == 2);
}

TEST_CASE("the plan output names the stranded pod and the NUMA nodes") {
  const Input in = StrandFixture();
  const std::string blind = PlanTable(MustPlan(in, Options(true)));
  CHECK_THAT(blind, Contains("NUMA-blind plan"));
  CHECK_THAT(blind, Contains("default/db-1"));
  CHECK_THAT(blind, Contains("src-1 -> dst-split: TopologyAffinityError"));
  const std::string json = PlanJson(MustPlan(in, Options(false)));
  CHECK_THAT(json, Contains(R"("numaBlind":false)"));
  CHECK_THAT(json, Contains(R"("destination":"dst-whole","numaNodes":[0],"numaChecked":true)"));
  CHECK_THAT(json, Contains(R"("stranded":[])"));
}

// A PDB that allows one disruption: the second node holding one of its pods cannot go.
TEST_CASE("a PDB limits the set across nodes") {
  std::vector<std::string> items = {NodeJson("a", "4", "8Gi"), NodeJson("b", "4", "8Gi"),
                                    NodeJson("busy", "16", "64Gi"), NodeJson("spare", "4", "8Gi")};
  auto pod = [](const std::string& name, const std::string& node, const std::string& memory) {
    return R"({"kind": "Pod", "metadata": {"name": ")" + name +
           R"(", "namespace": "shop", "labels": {"app": "cart"}, "ownerReferences": [{"kind": "ReplicaSet", "name": "cart", "controller": true}]}, "spec": {"nodeName": ")" +
           node +
           R"(", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": ")" +
           memory + R"("}}}]}, "status": {"phase": "Running"}})";
  };
  items.push_back(pod("cart-1", "a", "1Gi"));
  items.push_back(pod("cart-2", "b", "1Gi"));
  // Keeps busy above the utilisation threshold, so it receives rather than goes; the PDB
  // counts it too, but it never moves.
  items.push_back(pod("filler", "busy", "40Gi"));
  items.push_back(
      R"({"kind": "PodDisruptionBudget", "apiVersion": "policy/v1", "metadata": {"name": "cart", "namespace": "shop"}, "spec": {"selector": {"matchLabels": {"app": "cart"}}}, "status": {"disruptionsAllowed": 1}})");
  Input in;
  in.snapshot = MustDecode({ListOf(items)});
  const Plan plan = MustPlan(in, Options(false));
  REQUIRE(plan.candidates.size() == 2);  // spare (empty) and one of a, b
  CHECK(plan.candidates[0].node == "spare");
  CHECK(plan.candidates[1].node == "a");
  CHECK(plan.candidates[1].moves.at(0).destination == "busy");
  bool b_refused = false;
  for (const NotDrainable& n : plan.not_drainable) {
    if (n.node != "b") continue;
    b_refused = n.kind == NotDrainableKind::kPdbExhausted && n.pdb == "shop/cart";
  }
  CHECK(b_refused);
  REQUIRE(plan.pdb_use.size() == 1);
  CHECK(plan.pdb_use[0].used == 1);
  CHECK(ReplayPlan(in.snapshot, in.numa, plan, Options(false)).empty());
}

// Empty nodes need no simulation and go first, up to max-scale-down-parallelism; the drains
// get what is left of it, within max-drain-parallelism.
TEST_CASE("empty nodes go first and the parallelism limits bound the rest") {
  std::vector<std::string> items;
  for (const char* n : {"e1", "e2", "e3", "busy-1", "busy-2", "busy-3"})
    items.push_back(NodeJson(n, "8", "32Gi"));
  items.push_back(NodeJson("sink", "64", "256Gi"));
  for (const char* n : {"busy-1", "busy-2", "busy-3"}) {
    items.push_back(
        std::string(R"({"kind": "Pod", "metadata": {"name": "p-)") + n +
        R"(", "namespace": "default", "ownerReferences": [{"kind": "ReplicaSet", "name": "rs", "controller": true}]}, "spec": {"nodeName": ")" +
        n +
        R"(", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}, "status": {"phase": "Running"}})");
  }
  Input in;
  in.snapshot = MustDecode({ListOf(items)});
  PlannerOptions options = Options(false);
  options.max_scale_down_parallelism = 4;
  options.max_drain_parallelism = 3;
  const Plan plan = MustPlan(in, options);
  CHECK(Nodes(plan.delete_empty) == std::vector<std::string>{"e1", "e2", "e3", "sink"});
  CHECK(plan.drain.empty());  // 4 - 4 empty leaves no room
  options.max_scale_down_parallelism = 6;
  const Plan wider = MustPlan(in, options);
  CHECK(wider.delete_empty.size() == 4);
  CHECK(wider.drain.size() == 2);
}

}  // namespace
}  // namespace qrm::cluster::drain
