// Fuzzes what the drain planner reads (cluster/drain): the cluster snapshot an operator hands
// it (kubectl JSON) and the NodeResourceTopology objects its NUMA state comes from. The first
// byte picks the reader, the rest is its input:
//   0  DecodeSnapshot: errors are kInvalidArgument with a message; an accepted snapshot written
//      back (WriteSnapshotJson) reads back and writes the same text again, each pod alone
//      (WritePodJson) reads back as one pod, the drainability rules and the eligibility
//      check run on every node without naming a pod of another node, and the plan moves pods
//      only to nodes of the snapshot not drained, within PDBs and CSI attach limits;
//   1  DecodeNodeResourceTopology, then NumaNodeStateFromNrt: errors as above; an accepted
//      state has 1 to kMaxNumaZones zones in ascending id order with 0 <= free <= capacity,
//      and a NUMA-bound dedicated pod, a numa_exclusive one and a shared pod admitted on it
//      (up to 8 zones: hints try every set of zones) can be placed, leaving every amount
//      within 0 and capacity, binding counts not negative, and an exclusive pod's zones held
//      exclusively by one pod.
//   2  PodLeftNode on a 200 answer to the executor's GET of an evicted pod: an error is
//      kInvalidArgument naming the URL; the same answer always gives the same result, and a
//      404 always means the pod left.
// Other selectors are ignored; new readers take the next numbers.
//
// Error messages are not checked for printable text or length as kube_objects_fuzz does: the
// snapshot decoder names objects by their names as written, which may hold any byte.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/drain/drainability.h"
#include "cluster/drain/numa_admission.h"
#include "cluster/drain/numa_state.h"
#include "cluster/drain/planner.h"
#include "cluster/drain/pods_gone.h"
#include "cluster/drain/snapshot_json.h"
#include "cluster/drain/snapshot_writer.h"
#include "cluster/drain/volume_limits.h"
#include "cluster/objects/node_resource_topology.h"

namespace {

using namespace qrm::cluster::drain;
using qrm::StatusCode;
using qrm::StatusOr;

constexpr int64_t kNow = 1'795'000'000;  // 2026-11-18, after the seeds' timestamps
constexpr size_t kMaxAdmittedZones = 8;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "drain_snapshot_fuzz: %s\n", what);
  std::abort();
}

void Check(bool ok, const char* what) {
  if (!ok) Fail(what);
}

void CheckError(const qrm::Status& status) {
  Check(status.code() == StatusCode::kInvalidArgument, "an error that is not kInvalidArgument");
  Check(!status.message().empty(), "an empty error message");
}

// Written, read and written again: the same text (nothing lost, nothing invented).
void CheckRoundTrip(const ClusterSnapshot& snapshot, const DecodeOptions& options) {
  const std::string written = WriteSnapshotJson(snapshot);
  const StatusOr<ClusterSnapshot> again = DecodeSnapshot({{"written", written}}, options);
  Check(again.ok(), "an accepted snapshot written back does not read back");
  Check(again->nodes.size() == snapshot.nodes.size() &&
            again->pods.size() == snapshot.pods.size() &&
            again->pdbs.size() == snapshot.pdbs.size(),
        "objects appear or vanish through a write");
  Check(WriteSnapshotJson(*again) == written, "a snapshot changes through a second write");
  for (const DrainPod& pod : snapshot.pods) {
    ClusterSnapshot one;
    Check(DecodeDocument({"pod", WritePodJson(pod)}, options, &one).ok(),
          "a pod written alone does not read back");
    Check(one.pods.size() == 1 && one.pods[0].Key() == pod.Key(), "a pod written alone changes");
  }
}

// Every index the rules hand back is one of the node's own pods.
void CheckDrainability(const ClusterSnapshot& snapshot) {
  for (const DrainNode& node : snapshot.nodes) {
    const NodeDrainability d = EvaluateNode(snapshot, node, {}, kNow);
    for (const auto* list : {&d.pods_to_move, &d.pods_skipped, &d.pods_awaited}) {
      for (size_t i : *list) {
        Check(i < snapshot.pods.size() && snapshot.pods[i].node_name == node.name,
              "the drainability rules name a pod of another node");
      }
    }
    const NodeEligibility e = EvaluateEligibility(snapshot, node, {}, kNow);
    Check(e.utilization >= 0, "a negative utilisation");
  }
}

// No node that receives a new volume ends past that driver's attach limit (volume_limits.h).
void CheckAttachLimits(const ClusterSnapshot& snapshot, const Plan& plan) {
  std::map<std::string, AttachedVolumes> before;  // by node
  for (const DrainPod& pod : snapshot.pods) {
    const DrainNode* node = snapshot.FindNode(pod.node_name);
    if (node != nullptr && !pod.Terminal()) {
      AddAttached(before[node->name], AttachedVolumesOf(snapshot, pod, *node));
    }
  }
  std::map<std::string, AttachedVolumes> after = before;
  for (const NodePlan& node : plan.candidates) {
    for (const PodMove& move : node.moves) {
      const DrainPod& pod = snapshot.pods[snapshot.pod_index.at(move.pod)];
      const DrainNode& to = *snapshot.FindNode(move.destination);
      AddAttached(after[to.name], AttachedVolumesOf(snapshot, pod, to));
    }
  }
  for (const DrainNode& node : snapshot.nodes) {
    const AttachLimits limits = AttachLimitsOf(snapshot, node);
    for (const auto& [key, ids] : after[node.name]) {
      auto limit = limits.find(key);
      if (limit == limits.end() || ids.size() == before[node.name][key].size()) continue;
      Check(static_cast<int64_t>(ids.size()) <= limit->second, "a move passes an attach limit");
    }
  }
}

// The planner takes any snapshot the decoder accepted; every move goes to a node of the
// snapshot that is not itself drained, and no PDB is used beyond what it allows.
void CheckPlan(const ClusterSnapshot& snapshot) {
  PlannerOptions options;
  options.now = kNow;
  options.max_drain_parallelism = 5;
  const StatusOr<Plan> plan = MakePlan(snapshot, {}, options);
  Check(plan.ok(), "the planner refuses a snapshot the decoder accepted");
  for (const NodePlan& node : plan->candidates) {
    for (const PodMove& move : node.moves) {
      Check(snapshot.FindNode(move.destination) != nullptr, "a move to an unknown node");
      for (const NodePlan& other : plan->candidates)
        Check(other.node != move.destination, "a move to a node that is drained");
    }
  }
  for (const PdbUse& use : plan->pdb_use)
    Check(use.used <= std::max<int64_t>(use.disruptions_allowed, 0) || !plan->reinjected.empty() ||
              !plan->aborted.empty(),
          "a PDB used beyond what it allows");
  CheckAttachLimits(snapshot, *plan);
}

void FuzzSnapshot(std::string_view json) {
  DecodeOptions options;
  options.node_group_label = "pool";
  const StatusOr<ClusterSnapshot> snapshot =
      DecodeSnapshot({{"input", std::string(json)}}, options);
  if (!snapshot.ok()) {
    CheckError(snapshot.status());
    return;
  }
  CheckRoundTrip(*snapshot, options);
  CheckDrainability(*snapshot);
  CheckPlan(*snapshot);
}

void CheckAmounts(const NumaNodeState& state) {
  for (const NumaZone& z : state.zones) {
    Check(z.cpu_milli.free >= 0 && z.cpu_milli.free <= z.cpu_milli.capacity, "cpu out of range");
    Check(z.memory_bytes.free >= 0 && z.memory_bytes.free <= z.memory_bytes.capacity,
          "memory out of range");
    for (const auto& [name, a] : z.extended) {
      Check(a.free >= 0 && a.free <= a.capacity, "an extended resource out of range");
    }
    Check(z.binding.bound_pods >= 0 && z.binding.dedicated_cpu_milli >= 0, "a negative binding");
  }
}

NumaPodRequest TestPod(NumaQos qos, bool numa_binding, int64_t cpu_milli, int64_t memory) {
  NumaPodRequest pod;
  pod.pod = "fuzz/pod";
  pod.qos = qos;
  pod.numa_binding = numa_binding;
  pod.containers.push_back({"c", cpu_milli, memory, {}});
  return pod;
}

// Admitted pods place, and placing keeps every amount in range.
void CheckAdmission(NumaNodeState state) {
  NumaPodRequest exclusive = TestPod(NumaQos::kDedicated, true, 1000, int64_t{1} << 20);
  exclusive.numa_exclusive = true;
  for (const NumaPodRequest& pod :
       {exclusive, TestPod(NumaQos::kDedicated, true, 2000, int64_t{1} << 30),
        TestPod(NumaQos::kShared, false, 500, int64_t{1} << 28)}) {
    const StatusOr<NumaPlacement> placement = Admit(state, pod);
    if (!placement.ok() || !placement->admitted) continue;
    Check(Place(state, *placement).ok(), "an admitted placement does not place");
    CheckAmounts(state);
    if (!pod.numa_exclusive) continue;
    for (const ZoneTake& take : placement->takes) {
      const NumaZone* z = state.Zone(take.zone);
      Check(!take.binds || (z->binding.exclusive && z->binding.bound_pods == 1),
            "an exclusive pod shares its zone");
    }
  }
}

void FuzzNrt(std::string_view json) {
  const StatusOr<qrm::cluster::NodeResourceTopology> nrt =
      qrm::cluster::DecodeNodeResourceTopology(json);
  if (!nrt.ok()) {
    CheckError(nrt.status());
    return;
  }
  const StatusOr<NumaNodeState> state = NumaNodeStateFromNrt(*nrt);
  if (!state.ok()) {
    CheckError(state.status());
    return;
  }
  Check(!state->zones.empty() && state->zones.size() <= kMaxNumaZones, "a zone count out of range");
  for (size_t i = 1; i < state->zones.size(); ++i) {
    Check(state->zones[i - 1].id < state->zones[i].id, "zones not in ascending id order");
  }
  Check(state->numa_info != nullptr, "a state without its NUMA info");
  CheckAmounts(*state);
  if (state->zones.size() <= kMaxAdmittedZones) CheckAdmission(*state);
}

}  // namespace

void FuzzPodAnswer(std::string_view input) {
  const qrm::kube::KubeResponse got{.code = 200, .body = std::string(input)};
  const StatusOr<bool> left = PodLeftNode(got, "n1", "https://api/pods/p");
  if (!left.ok()) {
    CheckError(left.status());
    Check(left.status().message().find("https://api/pods/p") != std::string::npos,
          "a pod answer's error does not name the URL");
  }
  const StatusOr<bool> again = PodLeftNode(got, "n1", "https://api/pods/p");
  Check(again.ok() == left.ok() && (!left.ok() || *again == *left),
        "the same pod answer read twice differs");
  const StatusOr<bool> gone = PodLeftNode({.code = 404, .body = std::string(input)}, "n1", "u");
  Check(gone.ok() && *gone, "a 404 does not mean the pod left");
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0]) {
    case 0: FuzzSnapshot(input); break;
    case 1: FuzzNrt(input); break;
    case 2: FuzzPodAnswer(input); break;
    default: break;
  }
  return 0;
}
