// The parallel drain planner: which nodes can be emptied together and where each of their pods
// would go. The Cluster Autoscaler's parallel scale-down algorithm (its design document,
// "Parallel drain", and core/scaledown/planner) with one step CA lacks: a pod placed on a
// node qrm manages must also be admitted there by qrm's topology merge (numa_admission.h), the
// check the kubelet makes when the pod arrives and CA's filters never make.
//
// One planning pass, as CA's UpdateUnneededNodes:
//  1. Pods of nodes already being drained (PlannerState::deleted_nodes) and recently evicted
//     pods whose replacement is not bound yet are placed first. If one finds no home the pass
//     stops with no candidates: the cluster has no room to spare.
//  2. Candidates are the eligible nodes (utilisation, scale-down-disabled, group minimum) that
//     no drainability rule blocks, empty ones first, then by ascending utilisation and name.
//  3. Each candidate in turn: fork the simulation, place each pod that must move (hardest
//     first), trying the pod's destination hint from the previous pass before a scan of the
//     other nodes, decrementing the remaining disruptions of its PDBs; if every pod has a
//     home, commit and add the node to the candidate set, else revert and report why.
//     Candidates are never destinations, and a node that received a pod is no candidate.
//  4. The time budget ends the pass; nodes not reached are reported as such.
// The order of everything is fixed by the input, so the same input gives the same plan.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster/drain/drainability.h"
#include "cluster/drain/numa_admission.h"
#include "cluster/drain/numa_state.h"
#include "cluster/drain/snapshot.h"
#include "common/numa_mask.h"
#include "common/status.h"

namespace qrm::cluster::drain {

struct PlannerOptions {
  DrainOptions drain;
  EligibilityOptions eligibility;
  // --max-scale-down-parallelism (CA's default 10): nodes deleted at once, empty or not,
  // counting those already being deleted.
  int max_scale_down_parallelism = 10;
  // --max-drain-parallelism (CA's default 1): non-empty nodes drained at once, counting
  // those already being drained.
  int max_drain_parallelism = 1;
  // Plan without qrm's admission step, as CA does; the plan then lists the pods the kubelet
  // would refuse on their destination (Plan::stranded).
  bool numa_blind = false;
  // --scale-down-simulation-timeout (CA's default 30 s): candidates not reached by then are
  // reported as not evaluated.
  std::chrono::milliseconds time_budget{30000};
  // How long an eviction counts as recent: its pod is placed again until its replacement is
  // bound to a node or this has passed.
  int64_t recent_eviction_window_seconds = 300;
  int64_t now = 0;  // Unix seconds, for the drainability rules and the eviction window
  // Taint keys that mark a node being drained: qrm-drain-planner's cordon (its --drain-taint)
  // and the Cluster Autoscaler's ToBeDeleted taint. Such nodes join the deleted set.
  std::vector<std::string> drain_taints = {"qrm.io/drain", "ToBeDeletedByClusterAutoscaler"};
};

// A pod evicted by an earlier pass: its object as it was and when it went.
struct RecentEviction {
  DrainPod pod;
  int64_t evicted_at = 0;  // Unix seconds
};

// What one pass hands to the next (CA keeps it in memory; qrm-drain-planner in --state).
struct PlannerState {
  // Source node -> pod uid -> destination node from the last pass.
  std::map<std::string, std::map<std::string, std::string>> destination_hints;
  // Nodes being drained or deleted now (an execute that has started and not finished). Nodes
  // with one of PlannerOptions::drain_taints count too; names the snapshot
  // lacks are nodes that are gone, which is how a drain ends.
  std::set<std::string> deleted_nodes;
  std::vector<RecentEviction> recent_evictions;
};

// Where one pod goes.
struct PodMove {
  std::string pod;  // namespace/name
  std::string uid;
  std::string destination;
  // The NUMA zones qrm's merge chose on the destination; empty when nothing of the pod is
  // NUMA-hinted or the destination has no NUMA state.
  NumaMask numa;
  bool numa_checked = false;  // the destination is qrm-managed and admission ran
  bool from_hint = false;     // the destination came from the previous pass's hint
};

struct NodePlan {
  std::string node;
  bool empty = false;  // nothing has to move
  double utilization = 0;
  std::vector<PodMove> moves;
  std::vector<std::string> skipped;  // pods that go with the node (daemonset, mirror, ...)
  std::vector<std::string> awaited;  // safe-to-evict=on-completion pods: wait, then delete
};

// Why a node is not in the candidate set.
enum class NotDrainableKind {
  kNotEligible,    // utilisation, annotation or group minimum (reason_code says which)
  kBlockedByPod,   // a drainability rule (rule, blocking_reason)
  kNoPlaceForPod,  // a pod found no destination (pod, reason)
  kPdbExhausted,   // an earlier candidate used the PDB's disruptions (pdb)
  kDestination,    // it receives pods of a candidate
  kBeingDeleted,   // already in PlannerState::deleted_nodes
  kNotEvaluated,   // the time budget ran out first
};
std::string_view NotDrainableKindName(NotDrainableKind kind);

struct NotDrainable {
  std::string node;
  NotDrainableKind kind = NotDrainableKind::kNotEligible;
  std::string reason_code;  // CA's names: "NotUnderutilized", "LocalStorage", ...
  std::string pod;          // the pod concerned, if any
  std::string pdb;          // the PDB concerned, if any
  std::string reason;       // a sentence for people
};

struct PdbUse {
  std::string pdb;  // namespace/name
  int64_t disruptions_allowed = 0;
  int64_t used = 0;  // by the candidate set and the nodes being deleted
};

// A pod the NUMA-blind plan sends where qrm (the kubelet) would refuse it.
struct StrandedPod {
  std::string pod;
  std::string source;
  std::string destination;
  std::string reason;   // "TopologyAffinityError" or "OutOfResources"
  std::string message;  // qrm's explanation
};

struct Plan {
  bool numa_blind = false;
  // The nodes to act on now, within the parallelism limits: empty nodes, then drains.
  std::vector<NodePlan> delete_empty;
  std::vector<NodePlan> drain;
  // Every candidate (CA's unneeded nodes), including those beyond the limits, in order.
  std::vector<NodePlan> candidates;
  std::vector<NotDrainable> not_drainable;  // node name order
  std::vector<PdbUse> pdb_use;              // PDBs with use, key order
  std::vector<StrandedPod> stranded;        // NUMA-blind plans only
  // Placements of the pods of nodes being deleted and of recent evictions (step 1).
  std::vector<PodMove> reinjected;
  // Step 1 failed: why there are no candidates.
  std::string aborted;
  bool timed_out = false;
  size_t nodes_evaluated = 0;  // candidates simulated
  // For the next pass: PlannerState::destination_hints.
  std::map<std::string, std::map<std::string, std::string>> destination_hints;
};

// One planning pass. `numa` holds the NUMA state of the nodes qrm manages (others are
// checked for resources only). kInvalidArgument for options out of range and for a NUMA state
// of a node the snapshot lacks.
StatusOr<Plan> MakePlan(const ClusterSnapshot& snapshot,
                        const std::map<std::string, NumaNodeState>& numa,
                        const PlannerOptions& options, const PlannerState& state = PlannerState());

}  // namespace qrm::cluster::drain
