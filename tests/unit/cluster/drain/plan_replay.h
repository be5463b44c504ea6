// An independent check of a plan: replays every move in plan order on its own accounting (not
// the planner's Simulation) and lists what would go wrong when the pods arrive: a destination
// over capacity, a pod the kubelet's topology manager (qrm's merge) refuses, a PDB exceeded, a
// pod that has to move and has no move, a destination that is itself drained, a pod placed
// against a required anti-affinity term (its own or a pod's already there) or a DoNotSchedule
// topology spread constraint, both counted by brute force over the placement as it is when the
// pod arrives.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cluster/drain/planner.h"
#include "cluster/drain/simulation.h"

namespace qrm::cluster::drain {

// Where the pods are while the plan is replayed: the snapshot's bound pods, minus the pods of
// the nodes drained so far, plus the pods moved so far.
class ReplayPlacement {
 public:
  explicit ReplayPlacement(const ClusterSnapshot& snapshot) : snapshot_(snapshot) {
    for (const DrainPod& pod : snapshot.pods) {
      if (!pod.node_name.empty() && !pod.Terminal()) placed_[pod.node_name].push_back(&pod);
    }
  }

  void Leave(const std::string& node) {
    leaving_.insert(node);
    placed_.erase(node);
  }
  void Put(const DrainPod& pod, const std::string& node) { placed_[node].push_back(&pod); }

  // What the scheduler's inter-pod filters would say of `pod` on `dest`, or "".
  std::string InterPodProblem(const DrainPod& pod, const DrainNode& dest) const {
    for (const auto& [name, pods] : placed_) {
      const DrainNode& node = *snapshot_.FindNode(name);
      for (const DrainPod* other : pods) {
        for (const PodAffinityTerm& t : pod.pod_anti_affinity) {
          if (SameDomain(node, dest, t.topology_key) && Selects(t, pod, *other)) {
            return "its anti-affinity selects " + other->Key() + " on " + name;
          }
        }
        for (const PodAffinityTerm& t : other->pod_anti_affinity) {
          if (SameDomain(node, dest, t.topology_key) && Selects(t, *other, pod)) {
            return "the anti-affinity of " + other->Key() + " on " + name + " selects it";
          }
        }
      }
    }
    for (const TopologySpreadConstraint& c : pod.spread) {
      if (c.when_unsatisfiable == "DoNotSchedule" && Skew(pod, c, dest) > c.max_skew) {
        return "its " + c.topology_key + " spread exceeds maxSkew";
      }
    }
    return "";
  }

 private:
  static bool SameDomain(const DrainNode& a, const DrainNode& b, const std::string& key) {
    auto x = a.labels.find(key), y = b.labels.find(key);
    return x != a.labels.end() && y != b.labels.end() && x->second == y->second;
  }
  // Only what the tests generate: terms without namespaces, on the owner's namespace.
  static bool Selects(const PodAffinityTerm& t, const DrainPod& owner, const DrainPod& pod) {
    return t.namespaces.empty() && !t.namespace_selector && owner.namespace_ == pod.namespace_ &&
           t.selector && SelectorMatches(*t.selector, pod.labels);
  }
  bool Counts(const DrainPod& pod, const TopologySpreadConstraint& c, const DrainPod& other) const {
    if (other.namespace_ != pod.namespace_ || other.deletion_time || !c.selector) return false;
    if (!SelectorMatches(*c.selector, other.labels)) return false;
    for (const std::string& key : c.match_label_keys) {
      auto mine = pod.labels.find(key), theirs = other.labels.find(key);
      if (mine != pod.labels.end() &&
          (theirs == other.labels.end() || theirs->second != mine->second)) {
        return false;
      }
    }
    return true;
  }
  int64_t Skew(const DrainPod& pod, const TopologySpreadConstraint& c,
               const DrainNode& dest) const {
    std::map<std::string, int64_t> per_domain;
    for (const DrainNode& node : snapshot_.nodes) {
      auto value = node.labels.find(c.topology_key);
      if (leaving_.count(node.name) || value == node.labels.end()) continue;
      if (c.honor_node_affinity && !MatchesNodeSelection(pod, node)) continue;
      int64_t& n = per_domain[value->second];
      auto pods = placed_.find(node.name);
      if (pods == placed_.end()) continue;
      for (const DrainPod* other : pods->second) n += Counts(pod, c, *other) ? 1 : 0;
    }
    int64_t least = per_domain.empty() ? 0 : INT64_MAX;
    for (const auto& [value, n] : per_domain) least = std::min(least, n);
    if (c.min_domains && static_cast<int64_t>(per_domain.size()) < *c.min_domains) least = 0;
    return per_domain[dest.labels.at(c.topology_key)] + (Counts(pod, c, pod) ? 1 : 0) - least;
  }

  const ClusterSnapshot& snapshot_;
  std::map<std::string, std::vector<const DrainPod*>> placed_;
  std::set<std::string> leaving_;
};

// What the tests generate of volumes: a claim bound to a volume labelled with one zone.
inline std::string VolumeProblem(const ClusterSnapshot& snapshot, const DrainPod& pod,
                                 const DrainNode& dest) {
  if (!snapshot.VolumesKnown()) return "";
  for (const Volume& v : pod.volumes) {
    if (v.kind != VolumeKind::kPersistentVolumeClaim) continue;
    auto claim = snapshot.claims.find(pod.namespace_ + "/" + v.claim);
    if (claim == snapshot.claims.end()) return "its claim " + v.claim + " does not exist";
    if (claim->second.volume_name.empty()) continue;
    const DrainVolume& volume = snapshot.volumes.at(claim->second.volume_name);
    const std::string zone = "topology.kubernetes.io/zone";
    if (volume.labels.count(zone) &&
        (!dest.labels.count(zone) || dest.labels.at(zone) != volume.labels.at(zone))) {
      return "its volume " + volume.name + " is in zone " + volume.labels.at(zone);
    }
  }
  return "";
}

// What the tests generate of attachments: claims bound to CSI volumes, and CSINodes with a
// limit for that driver. Returns the CSI volume handles of the pod's claims.
inline std::set<std::string> CsiHandles(const ClusterSnapshot& snapshot, const DrainPod& pod) {
  std::set<std::string> out;
  for (const Volume& v : pod.volumes) {
    if (v.kind != VolumeKind::kPersistentVolumeClaim) continue;
    auto claim = snapshot.claims.find(pod.namespace_ + "/" + v.claim);
    if (claim == snapshot.claims.end() || claim->second.volume_name.empty()) continue;
    const AttachedDisk& disk = snapshot.volumes.at(claim->second.volume_name).disk;
    if (!disk.empty() && !disk.in_tree) out.insert(disk.driver + "/" + disk.handle);
  }
  return out;
}

// The destination's attached volumes after the pod arrives, past its CSINode's limit.
inline std::string AttachProblem(const ClusterSnapshot& snapshot, const DrainPod& pod,
                                 const DrainNode& dest, std::set<std::string>& attached) {
  const std::set<std::string> handles = CsiHandles(snapshot, pod);
  const size_t before = attached.size();
  attached.insert(handles.begin(), handles.end());
  auto csi_node = snapshot.csi_nodes.find(dest.name);
  if (attached.size() == before || csi_node == snapshot.csi_nodes.end()) return "";
  for (const auto& [driver, count] : csi_node->second.drivers) {
    if (count && static_cast<int64_t>(attached.size()) > *count) {
      return fmt::format("{} volumes attached, {} allows {}", attached.size(), driver, *count);
    }
  }
  return "";
}

inline std::vector<std::string> ReplayPlan(const ClusterSnapshot& snapshot,
                                           const std::map<std::string, NumaNodeState>& numa,
                                           const Plan& plan, const PlannerOptions& options) {
  std::vector<std::string> problems;
  std::map<std::string, Resources> used;
  std::map<std::string, int64_t> pods;
  std::map<std::string, std::set<std::string>> attached;  // by node: CSI volume ids
  for (const DrainPod& pod : snapshot.pods) {
    if (pod.node_name.empty() || pod.phase == "Succeeded" || pod.phase == "Failed") continue;
    for (const std::string& id : CsiHandles(snapshot, pod)) attached[pod.node_name].insert(id);
    Resources& u = used[pod.node_name];
    u.cpu_milli += pod.requests.cpu_milli;
    u.memory_bytes += pod.requests.memory_bytes;
    for (const auto& [k, v] : pod.requests.extended) u.extended[k] += v;
    ++pods[pod.node_name];
  }
  std::set<std::string> drained;
  for (const NodePlan& node : plan.candidates) drained.insert(node.node);
  std::map<std::string, NumaNodeState> states = numa;
  std::map<std::string, int64_t> pdb_used;
  ReplayPlacement placement(snapshot);
  for (const NodePlan& node : plan.candidates) {
    placement.Leave(node.node);
    const NodeDrainability must =
        EvaluateNode(snapshot, *snapshot.FindNode(node.node), options.drain, options.now);
    if (must.pods_to_move.size() != node.moves.size()) {
      problems.push_back(fmt::format("{}: {} pods must move, the plan moves {}", node.node,
                                     must.pods_to_move.size(), node.moves.size()));
    }
    for (const PodMove& move : node.moves) {
      const DrainPod& pod = snapshot.pods[snapshot.pod_index.at(move.pod)];
      const DrainNode* dest = snapshot.FindNode(move.destination);
      if (dest == nullptr || drained.count(move.destination) || move.destination == node.node) {
        problems.push_back(fmt::format("{}: bad destination {}", move.pod, move.destination));
        continue;
      }
      for (const DrainPdb* pdb : snapshot.PdbsFor(pod)) ++pdb_used[pdb->Key()];
      Resources& u = used[move.destination];
      u.cpu_milli += pod.requests.cpu_milli;
      u.memory_bytes += pod.requests.memory_bytes;
      for (const auto& [k, v] : pod.requests.extended) u.extended[k] += v;
      const bool over = u.cpu_milli > dest->allocatable.cpu_milli ||
                        u.memory_bytes > dest->allocatable.memory_bytes ||
                        ++pods[move.destination] > dest->allocatable_pods;
      if (over) problems.push_back(fmt::format("{}: {} is over capacity", move.pod, dest->name));
      if (!ToleratesNode(pod, *dest) || !MatchesNodeSelection(pod, *dest)) {
        problems.push_back(
            fmt::format("{}: {} taints or selection refuse it", move.pod, dest->name));
      }
      if (std::string why = VolumeProblem(snapshot, pod, *dest); !why.empty()) {
        problems.push_back(fmt::format("{}: on {} {}", move.pod, dest->name, why));
      }
      if (std::string why = AttachProblem(snapshot, pod, *dest, attached[dest->name]);
          !why.empty()) {
        problems.push_back(fmt::format("{}: on {} {}", move.pod, dest->name, why));
      }
      if (std::string why = placement.InterPodProblem(pod, *dest); !why.empty()) {
        problems.push_back(fmt::format("{}: on {} {}", move.pod, dest->name, why));
      }
      placement.Put(pod, dest->name);
      auto state = states.find(move.destination);
      if (state == states.end()) continue;
      StatusOr<NumaPlacement> admitted = Admit(state->second, NumaRequestOf(pod));
      if (!admitted.ok() || !admitted->admitted || !Place(state->second, *admitted).ok()) {
        problems.push_back(fmt::format("{}: qrm refuses it on {}", move.pod, move.destination));
      }
    }
  }
  // The plugins' exclusivity: a zone held exclusively has that one pod bound to it.
  for (const auto& [name, state] : states) {
    for (const NumaZone& z : state.zones) {
      if (z.binding.exclusive && z.binding.bound_pods != 1) {
        problems.push_back(fmt::format("{} NUMA zone {}: held exclusively, {} pods bound", name,
                                       z.id, z.binding.bound_pods));
      }
    }
  }
  for (const DrainPdb& pdb : snapshot.pdbs) {
    if (pdb_used[pdb.Key()] > pdb.disruptions_allowed) {
      problems.push_back(fmt::format("PDB {}: {} disruptions, {} allowed", pdb.Key(),
                                     pdb_used[pdb.Key()], pdb.disruptions_allowed));
    }
  }
  return problems;
}

}  // namespace qrm::cluster::drain
