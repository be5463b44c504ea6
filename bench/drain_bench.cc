// drain_bench: one pass of the NUMA-aware drain planner (cluster/drain/planner.h MakePlan).
//
//   P12_1k <ms> ms   MakePlan over 1,000 nodes x 30 pods, median of --runs (target <= 1000 ms)
//   P12_5k <ms> ms   MakePlan over 5,000 nodes x 30 pods, one run (target <= 10000 ms)
//
// The clusters come from GenerateCluster (cluster/drain/synthetic_cluster.h) with its default
// mix: half the nodes with 4 NUMA zones, a fifth of the pods dedicated_cores NUMA-bound, nodes
// filled to 0.24-0.95 of their CPU around a mean of 0.6, 5 % empty, 50 PDBs; every node is
// qrm-managed, so every placement runs qrm's admission. The planner runs with CA's default
// options and a 60 s budget, so the whole pass is timed rather than cut short; a pass that
// times out, fails or finds no candidate fails the run, so the figure is never measured on a
// plan that decided nothing. `#` lines: the plan's shape and the NUMA-blind plan's time.
//
// Flags: --only ID (repeatable), --runs N (3, for P12_1k), --pods N (30 per node),
// --seed N (1).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/scale/bench_args.h"
#include "cluster/drain/planner.h"
#include "cluster/drain/synthetic_cluster.h"

namespace {

using namespace qrm::cluster::drain;
using qrm::bench::BenchArgs;

int Fail(const std::string& what) {
  std::fprintf(stderr, "drain_bench: %s\n", what.c_str());
  return 1;
}

double MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

PlannerOptions Options(const SyntheticClusterOptions& cluster, bool numa_blind) {
  PlannerOptions o;
  o.time_budget = std::chrono::milliseconds(60'000);
  o.now = cluster.now;
  o.numa_blind = numa_blind;
  return o;
}

struct Timed {
  qrm::StatusOr<Plan> plan;
  double ms = 0;
};

Timed TimePlan(const SyntheticCluster& c, const PlannerOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  qrm::StatusOr<Plan> plan = MakePlan(c.snapshot, c.numa, options);
  return {std::move(plan), MillisSince(start)};
}

// Why the plan cannot stand for the figure, or "" when it can.
std::string Unusable(const qrm::StatusOr<Plan>& plan) {
  if (!plan.ok()) return "MakePlan failed: " + plan.status().ToString();
  if (plan->timed_out) return "the plan ran out of its 60 s budget";
  if (!plan->aborted.empty()) return "the plan was aborted: " + plan->aborted;
  if (plan->candidates.empty()) return "the plan found no candidate: the figure would mean nothing";
  return "";
}

size_t Moves(const Plan& plan) {
  size_t moves = 0;
  for (const NodePlan& n : plan.candidates) moves += n.moves.size();
  return moves;
}

size_t Empty(const Plan& plan) {
  size_t empty = 0;
  for (const NodePlan& n : plan.candidates) empty += n.empty;
  return empty;
}

// Plans the cluster `runs` times (median) NUMA-aware and once NUMA-blind; prints the figure.
int RunOne(const BenchArgs& args, const char* id, size_t nodes, int runs, int target_ms) {
  SyntheticClusterOptions co;
  co.nodes = nodes;
  co.pods_per_node = args.Int("pods");
  co.seed = static_cast<uint64_t>(args.Int("seed"));
  const auto generated = std::chrono::steady_clock::now();
  const SyntheticCluster cluster = GenerateCluster(co);
  const double generate_ms = MillisSince(generated);

  std::vector<double> ms;
  std::optional<Plan> last;
  for (int i = 0; i < runs; ++i) {
    Timed t = TimePlan(cluster, Options(co, false));
    if (std::string why = Unusable(t.plan); !why.empty()) return Fail(id + (": " + why));
    ms.push_back(t.ms);
    last = *std::move(t.plan);
  }
  const Plan& plan = *last;
  const Timed blind = TimePlan(cluster, Options(co, true));
  if (std::string why = Unusable(blind.plan); !why.empty()) {
    return Fail(id + (": NUMA-blind: " + why));
  }
  const double median = qrm::bench::Median(ms);
  std::fprintf(stderr,
               "# %s: %zu nodes, %zu pods (%zu refused by qrm while generating, %.0f ms), %zu "
               "PDBs: %zu candidates (%zu empty), %zu moves, %zu nodes evaluated, stranded %zu\n",
               id, cluster.snapshot.nodes.size(), cluster.snapshot.pods.size(), cluster.refused,
               generate_ms, cluster.snapshot.pdbs.size(), plan.candidates.size(), Empty(plan),
               Moves(plan), plan.nodes_evaluated, plan.stranded.size());
  std::fprintf(stderr,
               "# %s NUMA-blind (CA's own check): %.1f ms, %zu candidates, %zu moves, %zu pods "
               "stranded (the kubelet would refuse them on their destination)\n",
               id, blind.ms, blind.plan->candidates.size(), Moves(*blind.plan),
               blind.plan->stranded.size());
  std::printf("P12 plan %zu nodes x %d pods: %.1f ms (target <= %d ms)\n", nodes, co.pods_per_node,
              median, target_ms);
  std::printf("%s %.1f ms\n", id, median);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs args({{"runs", 3}, {"pods", 30}, {"seed", 1}});
  if (std::string error = args.Parse(argc, argv); !error.empty()) {
    std::fprintf(stderr, "drain_bench: %s\n", error.c_str());
    return 2;
  }
  if (args.Int("runs") < 1) {
    std::fprintf(stderr, "drain_bench: --runs must be at least 1\n");
    return 2;
  }
  int rc = 0;
  if (args.Selected("P12_1k")) rc |= RunOne(args, "P12_1k", 1000, args.Int("runs"), 1000);
  if (args.Selected("P12_5k")) rc |= RunOne(args, "P12_5k", 5000, 1, 10000);
  return rc;
}
