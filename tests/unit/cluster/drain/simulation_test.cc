// The planner's working copy of the cluster: fit checks, NUMA admission on placement, PDB
// disruptions, and Fork / Revert / Commit.
#include "cluster/drain/simulation.h"

#include <catch2/catch.hpp>

#include "tests/unit/cluster/drain/planner_builders.h"

namespace qrm::cluster::drain {
namespace {

NumaNodeState TwoZones(const std::string& node, int64_t free_cpus_each) {
  std::vector<NumaZone> zones(2);
  for (int i = 0; i < 2; ++i) {
    zones[i].id = i;
    zones[i].cpu_milli = {free_cpus_each * 1000, 8000};
    zones[i].memory_bytes = {16 * kGiB, 16 * kGiB};
  }
  auto state = MakeNumaNodeState(node, zones, topology::Policy::kSingleNumaNode,
                                 topology::Scope::kContainer);
  REQUIRE(state.ok());
  return *state;
}

TEST_CASE("resources taints selectors and pod slots decide the fit") {
  DrainNode node = MakeNode("n", 4, 8);
  node.taints.push_back({"dedicated", "db", "NoSchedule"});
  node.taints.push_back({"soft", "", "PreferNoSchedule"});
  node.labels["zone"] = "a";
  ClusterSnapshot s = MakeSnapshot({node}, {MakePod("old", "n", 3000, 1)});
  Simulation sim(s, {}, false);
  DrainPod pod = MakePod("p", "", 500, 1);
  CHECK(sim.Fits(pod, 0) == FitFailure::kTaint);
  pod.tolerations.push_back({"dedicated", "Equal", "db", "NoSchedule"});
  CHECK(sim.Fits(pod, 0) == FitFailure::kFits);
  pod.requests.cpu_milli = 1500;
  CHECK(sim.Fits(pod, 0) == FitFailure::kResources);
  pod.requests.cpu_milli = 1000;
  pod.node_selector["zone"] = "b";
  CHECK(sim.Fits(pod, 0) == FitFailure::kNodeSelector);
  pod.node_selector["zone"] = "a";
  pod.requests.extended["nvidia.com/gpu"] = 1;
  CHECK(sim.Fits(pod, 0) == FitFailure::kResources);
  pod.requests.extended.clear();
  s.nodes[0].allocatable_pods = 1;
  CHECK(sim.Fits(pod, 0) == FitFailure::kTooManyPods);
  s.nodes[0].allocatable_pods = 110;
  s.nodes[0].unschedulable = true;
  CHECK(sim.Fits(pod, 0) == FitFailure::kUnschedulable);
  pod.tolerations.push_back({"", "Exists", "", ""});  // tolerates everything
  CHECK(sim.Fits(pod, 0) == FitFailure::kFits);
}

TEST_CASE("revert undoes placements NUMA takes and PDB use since the fork") {
  ClusterSnapshot s = MakeSnapshot({MakeNode("n", 16, 32)}, {}, {});
  DrainPdb pdb;
  pdb.namespace_ = "default";
  pdb.name = "all";
  pdb.selector = LabelSelector{};
  pdb.disruptions_allowed = 1;
  s.pdbs.push_back(pdb);
  s.Reindex();
  Simulation sim(s, {{"n", TwoZones("n", 8)}}, false);
  const DrainPod pod = MakePod("db", "", 6000, 2, "dedicated_cores", true);
  std::optional<NumaPlacement> placement;

  sim.Fork();
  CHECK_FALSE(sim.TakeDisruption(pod).has_value());
  REQUIRE(sim.Place(pod, 0, &placement) == FitFailure::kFits);
  REQUIRE(placement.has_value());
  CHECK(placement->nodes.Count() == 1);
  CHECK(sim.use(0).requested.cpu_milli == 6000);
  CHECK(sim.remaining_disruptions(0) == 0);
  CHECK(sim.TakeDisruption(pod) == std::optional<size_t>(0));  // none left
  sim.Revert();
  CHECK(sim.use(0).requested.cpu_milli == 0);
  CHECK(sim.use(0).pods == 0);
  CHECK(sim.remaining_disruptions(0) == 1);
  CHECK(sim.numa(0)->zones[0].cpu_milli.free == 8000);
  CHECK(sim.numa(0)->zones[1].cpu_milli.free == 8000);

  sim.Fork();
  REQUIRE(sim.Place(pod, 0, &placement) == FitFailure::kFits);
  REQUIRE(sim.Place(pod, 0, &placement) == FitFailure::kFits);  // the other zone
  // A third: the node has only 4 CPUs left.
  CHECK(sim.Place(pod, 0, &placement) == FitFailure::kResources);
  sim.Commit();
  CHECK(sim.use(0).requested.cpu_milli == 12000);
  CHECK(sim.numa(0)->zones[0].cpu_milli.free == 2000);
}

TEST_CASE("qrm admission refuses what the node total would take") {
  ClusterSnapshot s = MakeSnapshot({MakeNode("n", 16, 32)}, {});
  Simulation aware(s, {{"n", TwoZones("n", 5)}}, false);
  Simulation blind(s, {{"n", TwoZones("n", 5)}}, true);
  const DrainPod pod = MakePod("db", "", 6000, 2, "dedicated_cores", true);
  std::optional<NumaPlacement> placement;
  CHECK(aware.Place(pod, 0, &placement) == FitFailure::kNumaAdmission);
  REQUIRE(placement.has_value());
  CHECK(placement->reason == std::string(kTopologyAffinityErrorReason));
  CHECK(aware.use(0).requested.cpu_milli == 0);  // nothing taken
  CHECK(blind.Place(pod, 0, &placement) == FitFailure::kFits);
  CHECK_FALSE(placement.has_value());
  // A shared pod needs no alignment: it fits across the zones.
  CHECK(aware.Place(MakePod("web", "", 6000, 2), 0, &placement) == FitFailure::kFits);
}

}  // namespace
}  // namespace qrm::cluster::drain
