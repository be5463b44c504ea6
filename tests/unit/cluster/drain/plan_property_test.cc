// Randomised property test: for any synthetic cluster (sizes, shapes, fill, NUMA-bound share,
// PDBs, seeds), replaying qrm's plan on independent accounting admits every pod on its
// destination under the node's topology policy (qrm's own merge), exceeds no PDB and fills no
// node over its allocatable, breaks no required anti-affinity and no DoNotSchedule spread
// constraint, takes no pod away from its volume's zone, attaches no node more CSI volumes than
// its CSINode allows; and the plan is the same when made twice.
// The NUMA-blind plan of the same cluster is replayed too: every pod it strands is one the replay
// refuses.
#include <random>

#include <catch2/catch.hpp>

#include "cluster/drain/plan_output.h"
#include "cluster/drain/planner.h"
#include "cluster/drain/synthetic_cluster.h"
#include "tests/unit/cluster/drain/plan_replay.h"

namespace qrm::cluster::drain {
namespace {

SyntheticClusterOptions RandomOptions(std::mt19937_64& rng) {
  auto pick = [&](uint64_t n) { return rng() % n; };
  SyntheticClusterOptions o;
  o.nodes = 5 + pick(60);
  o.pods_per_node = 3 + static_cast<int>(pick(30));
  o.four_numa_fraction = static_cast<double>(pick(11)) / 10;
  o.numa_bound_fraction = static_cast<double>(pick(9)) / 10;
  o.fill = 0.2 + static_cast<double>(pick(7)) / 10;
  o.pdbs = static_cast<int>(pick(20));
  o.empty_fraction = static_cast<double>(pick(4)) / 10;
  o.seed = rng();
  return o;
}

TEST_CASE("every plan replays without a refusal an exceeded PDB or an overfull node") {
  std::mt19937_64 rng(20261127);
  size_t candidates = 0, moves = 0, numa_checked = 0, stranded = 0;
  size_t inter_pod_moves = 0, inter_pod_refusals = 0, volume_moves = 0, attach_refusals = 0;
  for (int round = 0; round < 150; ++round) {
    const SyntheticClusterOptions o = RandomOptions(rng);
    const SyntheticCluster cluster = GenerateCluster(o);
    PlannerOptions options;
    options.now = o.now;
    options.max_drain_parallelism = 1 + static_cast<int>(rng() % 8);
    options.max_scale_down_parallelism = 10;
    options.time_budget = std::chrono::minutes(5);
    INFO("round " << round << " seed " << o.seed << " nodes " << o.nodes);

    StatusOr<Plan> plan = MakePlan(cluster.snapshot, cluster.numa, options);
    REQUIRE(plan.ok());
    const std::vector<std::string> problems =
        ReplayPlan(cluster.snapshot, cluster.numa, *plan, options);
    INFO((problems.empty() ? "" : problems.front()));
    CHECK(problems.empty());
    CHECK(plan->stranded.empty());
    CHECK(PlanJson(*MakePlan(cluster.snapshot, cluster.numa, options)) == PlanJson(*plan));
    CHECK(static_cast<int>(plan->drain.size()) <= options.max_drain_parallelism);
    CHECK(plan->drain.size() + plan->delete_empty.size() <=
          static_cast<size_t>(options.max_scale_down_parallelism));
    candidates += plan->candidates.size();
    for (const NodePlan& node : plan->candidates) {
      moves += node.moves.size();
      for (const PodMove& move : node.moves) {
        numa_checked += move.numa_checked;
        const DrainPod& pod = cluster.snapshot.pods[cluster.snapshot.pod_index.at(move.pod)];
        inter_pod_moves += !pod.spread.empty() || !pod.pod_anti_affinity.empty();
        for (const Volume& v : pod.volumes)
          volume_moves += v.kind == VolumeKind::kPersistentVolumeClaim;
      }
    }
    for (const NotDrainable& n : plan->not_drainable) {
      inter_pod_refusals += n.reason.find("spread") != std::string::npos ||
                            n.reason.find("anti-affinity") != std::string::npos;
      attach_refusals += n.reason.find("volume attach limit") != std::string::npos;
    }

    options.numa_blind = true;
    StatusOr<Plan> blind = MakePlan(cluster.snapshot, cluster.numa, options);
    REQUIRE(blind.ok());
    // The replay refuses exactly the pods the blind plan reports as stranded.
    size_t refusals = 0;
    for (const std::string& p : ReplayPlan(cluster.snapshot, cluster.numa, *blind, options))
      refusals += p.find("qrm refuses") != std::string::npos;
    CHECK(refusals == blind->stranded.size());
    stranded += blind->stranded.size();
  }
  // The rounds exercised what they claim to.
  CHECK(candidates > 40);
  CHECK(moves > 200);
  CHECK(numa_checked == moves);
  CHECK(stranded > 0);
  // Pods with spread constraints and anti-affinity moved, and the filters refused some nodes.
  CHECK(inter_pod_moves > 20);
  CHECK(inter_pod_refusals > 0);
  CHECK(volume_moves > 5);     // pods on zonal volumes moved too
  CHECK(attach_refusals > 0);  // and full nodes were passed over
}

}  // namespace
}  // namespace qrm::cluster::drain
