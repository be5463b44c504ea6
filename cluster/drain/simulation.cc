#include "cluster/drain/simulation.h"

#include <utility>

#include "cluster/drain/volume_topology.h"

namespace qrm::cluster::drain {
namespace {

bool Exceeds(int64_t used, int64_t request, int64_t allocatable) {
  return request > 0 && SatAdd(used, request) > allocatable;
}

bool ResourcesFit(const Resources& request, const NodeUse& use, const DrainNode& node) {
  if (Exceeds(use.requested.cpu_milli, request.cpu_milli, node.allocatable.cpu_milli)) {
    return false;
  }
  if (Exceeds(use.requested.memory_bytes, request.memory_bytes, node.allocatable.memory_bytes)) {
    return false;
  }
  for (const auto& [name, amount] : request.extended) {
    auto used = use.requested.extended.find(name);
    auto allocatable = node.allocatable.extended.find(name);
    if (Exceeds(used == use.requested.extended.end() ? 0 : used->second, amount,
                allocatable == node.allocatable.extended.end() ? 0 : allocatable->second)) {
      return false;
    }
  }
  return true;
}

void AddRequests(Resources& to, const Resources& r) {
  to.cpu_milli = SatAdd(to.cpu_milli, r.cpu_milli);
  to.memory_bytes = SatAdd(to.memory_bytes, r.memory_bytes);
  for (const auto& [name, amount] : r.extended)
    to.extended[name] = SatAdd(to.extended[name], amount);
}

NumaQos QosOf(const std::string& level) {
  if (level == "dedicated_cores") return NumaQos::kDedicated;
  if (level == "reclaimed_cores") return NumaQos::kReclaimed;
  if (level == "system_cores") return NumaQos::kSystem;
  return NumaQos::kShared;
}

NumaContainerRequest ContainerRequestOf(const ContainerRequests& c) {
  return {c.name, c.requests.cpu_milli, c.requests.memory_bytes, c.requests.extended};
}

FitFailure FailureOf(InterPodFailure f) {
  switch (f) {
    case InterPodFailure::kFits: return FitFailure::kFits;
    case InterPodFailure::kPodAffinity: return FitFailure::kPodAffinity;
    case InterPodFailure::kPodAntiAffinity: return FitFailure::kPodAntiAffinity;
    case InterPodFailure::kExistingAntiAffinity: return FitFailure::kExistingAntiAffinity;
    case InterPodFailure::kTopologySpread: return FitFailure::kTopologySpread;
  }
  return FitFailure::kTopologySpread;
}

}  // namespace

NumaPodRequest NumaRequestOf(const DrainPod& pod) {
  NumaPodRequest out;
  out.pod = pod.Key();
  out.qos = QosOf(pod.qos_level);
  out.numa_binding = pod.numa_binding;
  out.numa_exclusive = pod.numa_exclusive;
  out.qos_error = pod.qos_error;
  out.role = pod.pod_role;
  out.anti_affine_roles = pod.anti_affine_roles;
  out.anti_affine_to_all_roles = pod.anti_affine_to_all_roles;
  for (const ContainerRequests& c : pod.init_containers)
    out.init_containers.push_back(ContainerRequestOf(c));
  for (const ContainerRequests& c : pod.containers) out.containers.push_back(ContainerRequestOf(c));
  // A pod read without its container list (a summary) is admitted as one container.
  if (out.containers.empty()) out.containers.push_back(ContainerRequestOf({"pod", pod.requests}));
  return out;
}

Simulation::Simulation(const ClusterSnapshot& snapshot,
                       const std::map<std::string, NumaNodeState>& numa, bool numa_blind)
    : snapshot_(snapshot),
      numa_blind_(numa_blind),
      use_(snapshot.nodes.size()),
      attach_limits_(snapshot.nodes.size()),
      migration_on_(snapshot.nodes.size()),
      numa_(snapshot.nodes.size()),
      locations_(snapshot),
      inter_pod_(snapshot, locations_) {
  for (size_t n = 0; n < snapshot.nodes.size(); ++n) {
    attach_limits_[n] = AttachLimitsOf(snapshot, snapshot.nodes[n]);
    migration_on_[n] = MigrationOn(snapshot, snapshot.nodes[n]);
  }
  for (const DrainPod& pod : snapshot.pods) {
    auto node = snapshot.node_index.find(pod.node_name);
    if (node == snapshot.node_index.end() || pod.Terminal()) continue;
    AddRequests(use_[node->second].requested, pod.requests);
    ++use_[node->second].pods;
    if (MayAttach(pod)) {
      AddAttached(use_[node->second].attached,
                  AttachedVolumesOf(snapshot, pod, migration_on_[node->second]));
    }
  }
  for (const auto& [name, state] : numa) {
    auto node = snapshot.node_index.find(name);
    if (node != snapshot.node_index.end()) numa_[node->second] = state;
  }
  pdb_remaining_.reserve(snapshot.pdbs.size());
  for (const DrainPdb& pdb : snapshot.pdbs) pdb_remaining_.push_back(pdb.disruptions_allowed);
}

void Simulation::Fork() {
  forked_ = true;
  undo_.clear();
}

void Simulation::Revert() {
  for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) {
    switch (it->kind) {
      case Undo::Kind::kUse: use_[it->index] = std::move(it->use); break;
      case Undo::Kind::kNuma: numa_[it->index] = std::move(it->numa); break;
      case Undo::Kind::kPdb: pdb_remaining_[it->index] = it->remaining; break;
      case Undo::Kind::kLocated: locations_.Remove(it->pod); break;
      case Undo::Kind::kUnlocated: locations_.Add(it->pod, it->index, it->moved); break;
      case Undo::Kind::kRemovedNode: locations_.SetRemoved(it->index, false); break;
    }
  }
  undo_.clear();
  forked_ = false;
}

void Simulation::Commit() {
  undo_.clear();
  forked_ = false;
}

const AttachedVolumes& Simulation::VolumesOf(const DrainPod& pod, size_t node) const {
  PodVolumesCache& c = volumes_cache_;
  if (c.name != pod.name || c.namespace_ != pod.namespace_ || c.volumes != pod.volumes) {
    c = {pod.namespace_, pod.name, pod.volumes, {}};
  }
  std::optional<AttachedVolumes>& volumes = c.by_migration[migration_on_[node] ? 1 : 0];
  if (!volumes) volumes = AttachedVolumesOf(snapshot_, pod, migration_on_[node]);
  return *volumes;
}

void Simulation::SaveUse(size_t node) {
  if (!forked_) return;
  Undo& undo = undo_.emplace_back(Undo::Kind::kUse, node);
  undo.use = use_[node];
}

void Simulation::SaveNuma(size_t node) {
  if (!forked_) return;
  Undo& undo = undo_.emplace_back(Undo::Kind::kNuma, node);
  undo.numa = numa_[node];
}

void Simulation::SavePdb(size_t pdb) {
  if (!forked_) return;
  Undo& undo = undo_.emplace_back(Undo::Kind::kPdb, pdb);
  undo.remaining = pdb_remaining_[pdb];
}

void Simulation::RemoveNode(size_t node) {
  if (locations_.removed(node)) return;
  locations_.SetRemoved(node, true);
  if (forked_) undo_.emplace_back(Undo::Kind::kRemovedNode, node);
  auto bound = snapshot_.pods_by_node.find(snapshot_.nodes[node].name);
  if (bound == snapshot_.pods_by_node.end()) return;
  for (size_t p : bound->second) {
    const DrainPod* pod = &snapshot_.pods[p];
    const bool was_moved = locations_.Moved(*pod);
    std::optional<size_t> was = locations_.Remove(pod);
    if (!was || !forked_) continue;
    Undo& undo = undo_.emplace_back(Undo::Kind::kUnlocated, *was);
    undo.pod = pod;
    undo.moved = was_moved;
  }
}

FitFailure Simulation::Fits(const DrainPod& pod, size_t node) const {
  const DrainNode& n = snapshot_.nodes[node];
  if (!ToleratesUnschedulable(pod, n)) return FitFailure::kUnschedulable;
  if (!ToleratesTaints(pod, n)) return FitFailure::kTaint;
  if (!MatchesNodeSelection(pod, n)) return FitFailure::kNodeSelector;
  if (use_[node].pods + 1 > n.allocatable_pods) return FitFailure::kTooManyPods;
  if (!ResourcesFit(pod.requests, use_[node], n)) return FitFailure::kResources;
  if (MayAttach(pod) &&
      !WithinAttachLimits(use_[node].attached, VolumesOf(pod, node), attach_limits_[node])) {
    return FitFailure::kVolumeLimits;
  }
  switch (CheckVolumes(snapshot_, pod, n)) {
    case VolumeFit::kFits: break;
    case VolumeFit::kClaimMissing:
    case VolumeFit::kVolumeMissing: return FitFailure::kVolumeMissing;
    case VolumeFit::kNodeAffinity:
    case VolumeFit::kZone: return FitFailure::kVolumeTopology;
  }
  return FailureOf(inter_pod_.Check(pod, node));
}

FitFailure Simulation::Place(const DrainPod& pod, size_t node,
                             std::optional<NumaPlacement>* placement) {
  placement->reset();
  if (FitFailure fit = Fits(pod, node); fit != FitFailure::kFits) return fit;
  if (!numa_blind_ && numa_[node]) {
    StatusOr<NumaPlacement> admitted = Admit(*numa_[node], NumaRequestOf(pod));
    // A request Admit cannot read (checked at decode) or a policy it cannot apply refuses.
    if (!admitted.ok() || !admitted->admitted) {
      if (admitted.ok()) *placement = *std::move(admitted);
      return FitFailure::kNumaAdmission;
    }
    SaveNuma(node);
    if (!drain::Place(*numa_[node], *admitted).ok()) return FitFailure::kNumaAdmission;
    *placement = *std::move(admitted);
  }
  SaveUse(node);
  AddRequests(use_[node].requested, pod.requests);
  ++use_[node].pods;
  if (MayAttach(pod)) AddAttached(use_[node].attached, VolumesOf(pod, node));
  const bool was_moved = locations_.Moved(pod);
  if (std::optional<size_t> was = locations_.Remove(&pod); was && forked_) {
    Undo& undo = undo_.emplace_back(Undo::Kind::kUnlocated, *was);
    undo.pod = &pod;
    undo.moved = was_moved;
  }
  locations_.Add(&pod, node, true);
  if (forked_) undo_.emplace_back(Undo::Kind::kLocated, node).pod = &pod;
  return FitFailure::kFits;
}

std::vector<size_t> Simulation::MatchingPdbs(const DrainPod& pod) const {
  std::vector<size_t> out;
  auto ns = snapshot_.pdbs_by_ns.find(pod.namespace_);
  if (ns == snapshot_.pdbs_by_ns.end()) return out;
  for (size_t i : ns->second)
    if (snapshot_.pdbs[i].Matches(pod)) out.push_back(i);
  return out;
}

std::optional<size_t> Simulation::TakeDisruption(const DrainPod& pod) {
  std::vector<size_t> pdbs = MatchingPdbs(pod);
  for (size_t i : pdbs)
    if (pdb_remaining_[i] < 1) return i;
  for (size_t i : pdbs) {
    SavePdb(i);
    --pdb_remaining_[i];
  }
  return std::nullopt;
}

void Simulation::ForceDisruption(const DrainPod& pod) {
  for (size_t i : MatchingPdbs(pod)) {
    SavePdb(i);
    --pdb_remaining_[i];
  }
}

const NumaNodeState* Simulation::numa(size_t node) const {
  return numa_[node] ? &*numa_[node] : nullptr;
}

}  // namespace qrm::cluster::drain
