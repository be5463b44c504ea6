// The drain planner's working copy of the cluster: what each node has left (resources, pod
// slots, NUMA zones), where the pods that count for other pods' affinity and spread are, and
// what each PDB still allows, with CA's ClusterSnapshot Fork / Revert / Commit. Changes after Fork
// are recorded in an undo log, so a revert costs what the simulation of one node changed, not a
// copy of the cluster.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/drain/node_selection.h"
#include "cluster/drain/numa_admission.h"
#include "cluster/drain/numa_state.h"
#include "cluster/drain/pod_affinity.h"
#include "cluster/drain/snapshot.h"
#include "cluster/drain/volume_limits.h"

namespace qrm::cluster::drain {

// Requests of the pods bound to a node (terminal pods hold nothing), and the volumes they
// have attached there that count against its attach limits.
struct NodeUse {
  Resources requested;
  int64_t pods = 0;
  AttachedVolumes attached;
};

// Why a pod does not fit a node; kFits when it does.
enum class FitFailure {
  kFits,
  kUnschedulable,         // spec.unschedulable and no toleration for it
  kTaint,                 // a NoSchedule or NoExecute taint the pod does not tolerate
  kNodeSelector,          // spec.nodeSelector or required node affinity
  kTooManyPods,           // status.allocatable.pods reached
  kResources,             // cpu, memory or an extended resource
  kVolumeLimits,          // a CSI driver's attach limit (volume_limits.h)
  kVolumeMissing,         // a claim or volume of the pod does not exist
  kVolumeTopology,        // a bound volume's node affinity or zone excludes the node
  kTopologySpread,        // a DoNotSchedule topology spread constraint (pod_affinity.h)
  kPodAffinity,           // a required pod affinity term
  kPodAntiAffinity,       // a required pod anti-affinity term of the pod
  kExistingAntiAffinity,  // a required anti-affinity term of a pod already there
  kNumaAdmission,         // qrm's topology merge refuses (the kubelet would)
};

// qrm's admission request for a pod: its QoS as the snapshot decoder resolved it (no level is
// shared_cores, as Katalyst reads it; a QoS that does not resolve is refused), the containers'
// requests.
NumaPodRequest NumaRequestOf(const DrainPod& pod);

class Simulation {
 public:
  // `numa`: the NUMA state of the nodes qrm manages, by node name; with `numa_blind` it is
  // kept but never consulted when placing.
  Simulation(const ClusterSnapshot& snapshot, const std::map<std::string, NumaNodeState>& numa,
             bool numa_blind);
  // inter_pod_ refers to locations_: a copy would read the original's.
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // Starts recording changes (one level: CA forks once per candidate node).
  void Fork();
  // Undoes every change since Fork.
  void Revert();
  // Keeps them.
  void Commit();
  bool forked() const { return forked_; }

  // The node leaves the cluster (a candidate, or a node being deleted): its pods no longer
  // count for other pods' affinity and spread, and it is no topology domain.
  void RemoveNode(size_t node);

  // Scheduling checks without NUMA: selection, taints, pod slots, resources, volume attach
  // limits, volume topology, then topology spread and inter-pod affinity.
  FitFailure Fits(const DrainPod& pod, size_t node) const;
  // Fits, then (unless NUMA-blind) qrm's admission on a node with NUMA state; on success the
  // pod's requests and NUMA takes are added to the node. *placement is set when admission ran.
  FitFailure Place(const DrainPod& pod, size_t node, std::optional<NumaPlacement>* placement);

  // Takes one disruption from every PDB that matches the pod when each has one left;
  // otherwise takes nothing and returns the first exhausted PDB's index.
  std::optional<size_t> TakeDisruption(const DrainPod& pod);
  // Takes one from each matching PDB even when none is left (pods already being evicted).
  void ForceDisruption(const DrainPod& pod);
  int64_t remaining_disruptions(size_t pdb) const { return pdb_remaining_[pdb]; }

  const NodeUse& use(size_t node) const { return use_[node]; }
  // The node's NUMA state, or nullptr when qrm does not manage it.
  const NumaNodeState* numa(size_t node) const;

 private:
  struct Undo {
    enum class Kind { kUse, kNuma, kPdb, kLocated, kUnlocated, kRemovedNode };
    Undo(Kind k, size_t i) : kind(k), index(i) {}
    Kind kind;
    size_t index;
    NodeUse use;
    std::optional<NumaNodeState> numa;
    int64_t remaining = 0;
    const DrainPod* pod = nullptr;  // kLocated (undo: remove) and kUnlocated (undo: add back)
    bool moved = false;             // kUnlocated: it had been moved there
  };

  // The pod's volumes that count against `node`'s attach limits; computed once per pod and
  // migration setting while the planner tries the same pod on node after node.
  const AttachedVolumes& VolumesOf(const DrainPod& pod, size_t node) const;
  void SaveUse(size_t node);
  void SaveNuma(size_t node);
  void SavePdb(size_t pdb);
  std::vector<size_t> MatchingPdbs(const DrainPod& pod) const;

  const ClusterSnapshot& snapshot_;
  bool numa_blind_;
  std::vector<NodeUse> use_;
  std::vector<AttachLimits> attach_limits_;  // by node index
  std::vector<bool> migration_on_;           // by node index (volume_limits.h)
  // What AttachedVolumesOf depends on of the pod, and its answers.
  struct PodVolumesCache {
    std::string namespace_, name;
    std::vector<Volume> volumes;
    std::optional<AttachedVolumes> by_migration[2];
  };
  mutable PodVolumesCache volumes_cache_;
  std::vector<std::optional<NumaNodeState>> numa_;  // by node index
  std::vector<int64_t> pdb_remaining_;              // by PDB index
  PodLocations locations_;
  mutable InterPodCheck inter_pod_;  // counts cached per incoming pod
  bool forked_ = false;
  std::vector<Undo> undo_;
};

}  // namespace qrm::cluster::drain
