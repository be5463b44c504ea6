// An independent check of a plan: replays every move in plan order on its own accounting (not
// the planner's Simulation) and lists what would go wrong when the pods arrive: a destination
// over capacity, a pod the kubelet's topology manager (qrm's merge) refuses, a PDB exceeded, a
// pod that has to move and has no move, a destination that is itself drained.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cluster/drain/planner.h"
#include "cluster/drain/simulation.h"

namespace qrm::cluster::drain {

inline std::vector<std::string> ReplayPlan(const ClusterSnapshot& snapshot,
                                           const std::map<std::string, NumaNodeState>& numa,
                                           const Plan& plan, const PlannerOptions& options) {
  std::vector<std::string> problems;
  std::map<std::string, Resources> used;
  std::map<std::string, int64_t> pods;
  for (const DrainPod& pod : snapshot.pods) {
    if (pod.node_name.empty() || pod.phase == "Succeeded" || pod.phase == "Failed") continue;
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
  for (const NodePlan& node : plan.candidates) {
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
      auto state = states.find(move.destination);
      if (state == states.end()) continue;
      StatusOr<NumaPlacement> admitted = Admit(state->second, NumaRequestOf(pod));
      if (!admitted.ok() || !admitted->admitted || !Place(state->second, *admitted).ok()) {
        problems.push_back(fmt::format("{}: qrm refuses it on {}", move.pod, move.destination));
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
