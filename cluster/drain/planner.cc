#include "cluster/drain/planner.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "cluster/drain/error_list.h"
#include "cluster/drain/pod_affinity_json.h"
#include "cluster/drain/simulation.h"
#include "common/log.h"

namespace qrm::cluster::drain {
namespace {

using Clock = std::chrono::steady_clock;

struct Candidate {
  size_t node = 0;
  double utilization = 0;
  NodeDrainability drain;
  bool empty() const { return drain.pods_to_move.empty() && drain.pods_awaited.empty(); }
};

bool HasDrainTaint(const DrainNode& node, const std::vector<std::string>& keys) {
  return std::any_of(node.taints.begin(), node.taints.end(), [&](const Taint& t) {
    return std::find(keys.begin(), keys.end(), t.key) != keys.end();
  });
}

std::string_view FitFailureText(FitFailure f) {
  switch (f) {
    case FitFailure::kFits: return "fits";
    case FitFailure::kUnschedulable: return "unschedulable";
    case FitFailure::kTaint: return "untolerated taint";
    case FitFailure::kNodeSelector: return "node selector or affinity";
    case FitFailure::kTooManyPods: return "too many pods";
    case FitFailure::kResources: return "insufficient resources";
    case FitFailure::kVolumeLimits: return "volume attach limit";
    case FitFailure::kVolumeMissing: return "persistent volume claim or volume not found";
    case FitFailure::kVolumeTopology: return "volume node affinity or zone";
    case FitFailure::kTopologySpread: return "topology spread constraints";
    case FitFailure::kPodAffinity: return "pod affinity";
    case FitFailure::kPodAntiAffinity: return "pod anti-affinity";
    case FitFailure::kExistingAntiAffinity: return "existing pods' anti-affinity";
    case FitFailure::kNumaAdmission: return "refused by qrm's NUMA admission";
  }
  return "?";
}

// Harder pods first, so that they get the roomiest destinations: NUMA-bound dedicated pods
// (numa_exclusive ones, which need whole zones, before the others), then by CPU and memory
// request, then by key for a fixed order.
bool HarderFirst(const DrainPod& a, const DrainPod& b) {
  auto rank = [](const DrainPod& p) {
    const int binding = p.numa_exclusive ? 0 : p.numa_binding ? 1 : 2;
    return std::make_tuple(p.qos_level == "dedicated_cores" ? 0 : 1, binding, -p.requests.cpu_milli,
                           -p.requests.memory_bytes);
  };
  auto ra = rank(a), rb = rank(b);
  if (ra != rb) return ra < rb;
  return a.Key() < b.Key();
}

// Why a pod found no node: how many destinations failed for each reason, and the last NUMA
// refusal's explanation.
struct Misses {
  std::map<FitFailure, int> count;
  std::string numa_reason;

  std::string Describe(const DrainPod& pod) const {
    std::string out = fmt::format("no node can take pod {}", pod.Key());
    const char* sep = ": ";
    for (const auto& [failure, n] : count) {
      out += fmt::format("{}{} {}", sep, n, FitFailureText(failure));
      sep = ", ";
    }
    if (count.empty()) out += ": no other node may receive pods";
    if (!numa_reason.empty()) out += fmt::format(" (last refusal: {})", numa_reason);
    return out;
  }
};

class Planner {
 public:
  Planner(const ClusterSnapshot& snapshot, const std::map<std::string, NumaNodeState>& numa,
          const PlannerOptions& options, const PlannerState& state)
      : snapshot_(snapshot),
        numa_(numa),
        options_(options),
        state_(state),
        sim_(snapshot, numa, options.numa_blind),
        excluded_(snapshot.nodes.size(), 0),
        received_(snapshot.nodes.size(), 0) {}

  Plan Run();

 private:
  double Utilization(size_t node) const;
  void FindBeingDeleted();
  void WarnIfVolumesUnknown() const;
  void OrderDestinations();
  bool ReinjectDeletedNodesPods();
  bool ReinjectRecentEvictions();
  std::vector<Candidate> FindCandidates();
  bool GroupAtMinimum(size_t node);
  void Simulate(const Candidate& candidate);
  std::optional<PodMove> PlacePod(const DrainPod& pod, const std::string& source, Misses* misses);
  std::optional<PodMove> TryNode(const DrainPod& pod, size_t node, Misses* misses);
  void NotDrainableNode(size_t node, NotDrainableKind kind, std::string code, std::string reason,
                        std::string pod = {}, std::string pdb = {});
  void SelectForAction();
  void FindStranded();
  void Finish();

  const ClusterSnapshot& snapshot_;
  const std::map<std::string, NumaNodeState>& numa_;
  const PlannerOptions& options_;
  const PlannerState& state_;
  Simulation sim_;
  Plan plan_;
  std::vector<size_t> being_deleted_;
  std::vector<char> excluded_;  // candidates and nodes being deleted: no destinations
  std::vector<char> received_;  // destinations of committed moves: no candidates
  std::vector<size_t> destinations_;
  size_t cursor_ = 0;  // where the last scan found a home (CA's round-robin pointer)
  std::vector<std::pair<std::string, std::string>> move_sources_;  // per reinjected move
  // Node group -> nodes that stay; a candidate or a node being deleted leaves its group.
  std::map<std::string, int64_t> group_left_;
};

// Without PersistentVolumeClaims and PersistentVolumes the volume check cannot run: said once.
void Planner::WarnIfVolumesUnknown() const {
  if (snapshot_.VolumesKnown()) return;
  for (const DrainPod& pod : snapshot_.pods) {
    for (const Volume& v : pod.volumes) {
      const std::string claim = ClaimNameOf(pod, v);
      if (claim.empty()) continue;
      Logger("drain")->warn(
          "pod {} (and maybe others) uses persistentVolumeClaim {}, and the input lists no "
          "PersistentVolumeClaims or PersistentVolumes: where their volumes can be used, and "
          "what they count against attach limits, is not checked (add `kubectl get pvc,pv -A "
          "-o json`)",
          pod.Key(), claim);
      return;
    }
  }
}

double Planner::Utilization(size_t node) const {
  const DrainNode& n = snapshot_.nodes[node];
  const NodeUse& use = sim_.use(node);
  auto share = [](int64_t used, int64_t total) {
    return total > 0 ? static_cast<double>(used) / static_cast<double>(total) : 1.0;
  };
  return std::max(share(use.requested.cpu_milli, n.allocatable.cpu_milli),
                  share(use.requested.memory_bytes, n.allocatable.memory_bytes));
}

void Planner::FindBeingDeleted() {
  for (size_t i = 0; i < snapshot_.nodes.size(); ++i) {
    const DrainNode& node = snapshot_.nodes[i];
    if (node.node_group) ++group_left_[*node.node_group];
  }
  for (size_t i = 0; i < snapshot_.nodes.size(); ++i) {
    const DrainNode& node = snapshot_.nodes[i];
    if (state_.deleted_nodes.contains(node.name) || HasDrainTaint(node, options_.drain_taints)) {
      if (node.node_group) --group_left_[*node.node_group];
      being_deleted_.push_back(i);
      excluded_[i] = 1;
      sim_.RemoveNode(i);
    }
  }
}

// Fullest first: CA binpacks from the other end of its candidate list, so that the emptiest
// nodes stay free to be drained.
void Planner::OrderDestinations() {
  std::vector<std::pair<double, size_t>> order;
  for (size_t i = 0; i < snapshot_.nodes.size(); ++i)
    if (!excluded_[i]) order.emplace_back(Utilization(i), i);
  std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    return snapshot_.nodes[a.second].name < snapshot_.nodes[b.second].name;
  });
  for (const auto& [u, i] : order) destinations_.push_back(i);
}

std::optional<PodMove> Planner::TryNode(const DrainPod& pod, size_t node, Misses* misses) {
  std::optional<NumaPlacement> placement;
  FitFailure fit = sim_.Place(pod, node, &placement);
  if (fit != FitFailure::kFits) {
    ++misses->count[fit];
    if (placement) {
      misses->numa_reason = fmt::format("{} on {}: {}", placement->reason,
                                        snapshot_.nodes[node].name, placement->message);
    }
    return std::nullopt;
  }
  PodMove move{pod.Key(), pod.uid, snapshot_.nodes[node].name};
  if (placement) {
    move.numa_checked = true;
    move.numa = placement->nodes;
  }
  return move;
}

// The previous pass's destination first, then every other node from the scan pointer on.
std::optional<PodMove> Planner::PlacePod(const DrainPod& pod, const std::string& source,
                                         Misses* misses) {
  auto hints = state_.destination_hints.find(source);
  if (hints != state_.destination_hints.end()) {
    auto hint = hints->second.find(pod.uid);
    if (hint != hints->second.end()) {
      auto node = snapshot_.node_index.find(hint->second);
      if (node != snapshot_.node_index.end() && !excluded_[node->second]) {
        if (std::optional<PodMove> move = TryNode(pod, node->second, misses)) {
          move->from_hint = true;
          return move;
        }
      }
    }
  }
  for (size_t k = 0; k < destinations_.size(); ++k) {
    const size_t at = (cursor_ + k) % destinations_.size();
    if (excluded_[destinations_[at]]) continue;
    if (std::optional<PodMove> move = TryNode(pod, destinations_[at], misses)) {
      cursor_ = at;
      return move;
    }
  }
  return std::nullopt;
}

// The pods of nodes being drained must still find homes; their PDB use counts but is not
// checked (the evictions are under way).
bool Planner::ReinjectDeletedNodesPods() {
  for (size_t node : being_deleted_) {
    const std::string& name = snapshot_.nodes[node].name;
    std::vector<const DrainPod*> pods;
    auto bound = snapshot_.pods_by_node.find(name);
    if (bound == snapshot_.pods_by_node.end()) continue;
    for (size_t p : bound->second) {
      const DrainPod& pod = snapshot_.pods[p];
      DrainOutcome outcome = EvaluatePod(snapshot_, pod, options_.drain, options_.now).outcome;
      if (outcome == DrainOutcome::kDrainable || outcome == DrainOutcome::kBlock) {
        pods.push_back(&pod);
      }
    }
    std::sort(pods.begin(), pods.end(),
              [](const DrainPod* a, const DrainPod* b) { return HarderFirst(*a, *b); });
    for (const DrainPod* pod : pods) {
      sim_.ForceDisruption(*pod);
      Misses misses;
      std::optional<PodMove> move = PlacePod(*pod, name, &misses);
      if (!move) {
        plan_.aborted = fmt::format("node {} is being drained and {}", name, misses.Describe(*pod));
        return false;
      }
      plan_.destination_hints[name][pod->uid] = move->destination;
      received_[snapshot_.node_index.at(move->destination)] = 1;
      plan_.reinjected.push_back(*std::move(move));
      move_sources_.emplace_back(name, pod->Key());
    }
  }
  return true;
}

// An evicted pod's replacement is a pod of the same controller created at or after the
// eviction and bound to a node; until one is, the evicted pod still needs room.
bool Planner::ReinjectRecentEvictions() {
  std::map<std::string, std::vector<int64_t>> replacements;  // controller -> creation times
  for (const DrainPod& pod : snapshot_.pods) {
    const OwnerReference* owner = pod.Controller();
    if (owner && !pod.node_name.empty() && pod.creation_time) {
      replacements[pod.namespace_ + "/" + owner->kind + "/" + owner->name].push_back(
          *pod.creation_time);
    }
  }
  for (const RecentEviction& evicted : state_.recent_evictions) {
    if (options_.now - evicted.evicted_at > options_.recent_eviction_window_seconds) continue;
    const DrainPod& pod = evicted.pod;
    if (snapshot_.pod_index.contains(pod.Key())) continue;  // still there: not gone yet
    if (const OwnerReference* owner = pod.Controller()) {
      auto& times = replacements[pod.namespace_ + "/" + owner->kind + "/" + owner->name];
      auto replacement = std::find_if(times.begin(), times.end(),
                                      [&](int64_t t) { return t >= evicted.evicted_at; });
      if (replacement != times.end()) {
        times.erase(replacement);
        continue;
      }
    }
    Misses misses;
    std::optional<PodMove> move = PlacePod(pod, pod.node_name, &misses);
    if (!move) {
      plan_.aborted = fmt::format("recently evicted {}", misses.Describe(pod));
      return false;
    }
    received_[snapshot_.node_index.at(move->destination)] = 1;
    plan_.reinjected.push_back(*std::move(move));
    move_sources_.emplace_back(pod.node_name, pod.Key());
  }
  return true;
}

void Planner::NotDrainableNode(size_t node, NotDrainableKind kind, std::string code,
                               std::string reason, std::string pod, std::string pdb) {
  plan_.not_drainable.push_back({snapshot_.nodes[node].name, kind, std::move(code), std::move(pod),
                                 std::move(pdb), std::move(reason)});
}

std::vector<Candidate> Planner::FindCandidates() {
  std::vector<Candidate> out;
  for (size_t i = 0; i < snapshot_.nodes.size(); ++i) {
    const DrainNode& node = snapshot_.nodes[i];
    if (excluded_[i]) {
      NotDrainableNode(i, NotDrainableKind::kBeingDeleted, "CurrentlyBeingDeleted",
                       "the node is already being drained");
      continue;
    }
    NodeEligibility eligible =
        EvaluateEligibility(snapshot_, node, options_.eligibility, options_.now);
    if (!eligible.eligible) {
      NotDrainableNode(i, NotDrainableKind::kNotEligible, std::string(eligible.unremovable_reason),
                       eligible.reason);
      continue;
    }
    NodeDrainability drain = EvaluateNode(snapshot_, node, options_.drain, options_.now);
    if (!drain.drainable) {
      NotDrainableNode(i, NotDrainableKind::kBlockedByPod,
                       std::string(BlockingReasonName(drain.blocking_reason)), drain.reason,
                       drain.blocking_pod);
      continue;
    }
    out.push_back({i, eligible.utilization, std::move(drain)});
  }
  std::sort(out.begin(), out.end(), [&](const Candidate& a, const Candidate& b) {
    if (a.empty() != b.empty()) return a.empty();
    if (a.utilization != b.utilization) return a.utilization < b.utilization;
    return snapshot_.nodes[a.node].name < snapshot_.nodes[b.node].name;
  });
  return out;
}

// The group's minimum size counts the candidates chosen so far (CA's unneeded-nodes limit).
bool Planner::GroupAtMinimum(size_t node) {
  const std::optional<std::string>& group = snapshot_.nodes[node].node_group;
  if (!group) return false;
  auto min = options_.eligibility.min_group_size.find(*group);
  if (min == options_.eligibility.min_group_size.end()) return false;
  if (group_left_[*group] > min->second) return false;
  NotDrainableNode(node, NotDrainableKind::kNotEligible, "NodeGroupMinSizeReached",
                   fmt::format("node group min size reached: node group {} keeps {} nodes after "
                               "the candidates before this one, min size {}",
                               *group, group_left_[*group], min->second));
  return true;
}

void Planner::Simulate(const Candidate& candidate) {
  const size_t node = candidate.node;
  const std::string& name = snapshot_.nodes[node].name;
  if (received_[node]) {
    NotDrainableNode(node, NotDrainableKind::kDestination, "Destination",
                     "pods of an earlier candidate are planned to move here");
    return;
  }
  if (GroupAtMinimum(node)) return;
  NodePlan out{name, candidate.empty(), candidate.utilization};
  for (size_t p : candidate.drain.pods_skipped) out.skipped.push_back(snapshot_.pods[p].Key());
  for (size_t p : candidate.drain.pods_awaited) out.awaited.push_back(snapshot_.pods[p].Key());
  std::vector<const DrainPod*> pods;
  for (size_t p : candidate.drain.pods_to_move) pods.push_back(&snapshot_.pods[p]);
  std::sort(pods.begin(), pods.end(),
            [](const DrainPod* a, const DrainPod* b) { return HarderFirst(*a, *b); });

  sim_.Fork();
  sim_.RemoveNode(node);
  excluded_[node] = 1;
  for (const DrainPod* pod : pods) {
    if (std::optional<size_t> pdb = sim_.TakeDisruption(*pod)) {
      const DrainPdb& budget = snapshot_.pdbs[*pdb];
      sim_.Revert();
      excluded_[node] = 0;
      NotDrainableNode(node, NotDrainableKind::kPdbExhausted, "NotEnoughPdb",
                       fmt::format("moving pod {} would exceed PodDisruptionBudget {}: its "
                                   "disruptions are used by nodes planned before this one",
                                   pod->Key(), budget.Key()),
                       pod->Key(), budget.Key());
      return;
    }
    Misses misses;
    std::optional<PodMove> move = PlacePod(*pod, name, &misses);
    if (!move) {
      sim_.Revert();
      excluded_[node] = 0;
      NotDrainableNode(node, NotDrainableKind::kNoPlaceForPod, "NoPlaceToMovePods",
                       misses.Describe(*pod), pod->Key());
      return;
    }
    out.moves.push_back(*std::move(move));
  }
  sim_.Commit();
  if (const auto& group = snapshot_.nodes[node].node_group) --group_left_[*group];
  for (const PodMove& move : out.moves) {
    received_[snapshot_.node_index.at(move.destination)] = 1;
    plan_.destination_hints[name][move.uid] = move.destination;
  }
  plan_.candidates.push_back(std::move(out));
}

// CA's StartDeletion limits: empty nodes up to max-scale-down-parallelism, then non-empty
// ones up to min(what is left of it, max-drain-parallelism), both counting the nodes
// already being deleted.
void Planner::SelectForAction() {
  const int busy = static_cast<int>(being_deleted_.size());
  int empty_left = std::max(0, options_.max_scale_down_parallelism - busy);
  for (const NodePlan& c : plan_.candidates) {
    if (c.empty && empty_left > 0) {
      plan_.delete_empty.push_back(c);
      --empty_left;
    }
  }
  const int taken = busy + static_cast<int>(plan_.delete_empty.size());
  int drain_left = std::max(0, std::min(options_.max_scale_down_parallelism - taken,
                                        options_.max_drain_parallelism - busy));
  for (const NodePlan& c : plan_.candidates) {
    if (!c.empty && drain_left > 0) {
      plan_.drain.push_back(c);
      --drain_left;
    }
  }
}

// Replays the NUMA-blind plan's moves on the NUMA state of their destinations, in plan
// order, as the kubelets would admit them.
void Planner::FindStranded() {
  std::map<std::string, NumaNodeState> states;
  auto replay = [&](const std::string& source, const PodMove& move) {
    auto numa = numa_.find(move.destination);
    if (numa == numa_.end()) return;
    auto [state, added] = states.try_emplace(move.destination, numa->second);
    const DrainPod* pod = nullptr;
    if (auto p = snapshot_.pod_index.find(move.pod); p != snapshot_.pod_index.end()) {
      pod = &snapshot_.pods[p->second];
    }
    for (const RecentEviction& e : state_.recent_evictions)
      if (!pod && e.pod.Key() == move.pod) pod = &e.pod;
    if (pod == nullptr) return;
    StatusOr<NumaPlacement> placement = Admit(state->second, NumaRequestOf(*pod));
    if (placement.ok() && placement->admitted && Place(state->second, *placement).ok()) return;
    StrandedPod stranded{move.pod, source, move.destination};
    if (placement.ok()) {
      stranded.reason = placement->reason;
      stranded.message = placement->message;
    } else {
      stranded.reason = "AdmissionError";
      stranded.message = placement.status().message();
    }
    plan_.stranded.push_back(std::move(stranded));
  };
  for (size_t i = 0; i < plan_.reinjected.size(); ++i)
    replay(move_sources_[i].first, plan_.reinjected[i]);
  for (const NodePlan& node : plan_.candidates)
    for (const PodMove& move : node.moves) replay(node.node, move);
}

void Planner::Finish() {
  for (size_t i = 0; i < snapshot_.pdbs.size(); ++i) {
    const int64_t used = snapshot_.pdbs[i].disruptions_allowed - sim_.remaining_disruptions(i);
    if (used != 0) {
      plan_.pdb_use.push_back(
          {snapshot_.pdbs[i].Key(), snapshot_.pdbs[i].disruptions_allowed, used});
    }
  }
  std::sort(plan_.pdb_use.begin(), plan_.pdb_use.end(),
            [](const PdbUse& a, const PdbUse& b) { return a.pdb < b.pdb; });
  std::stable_sort(plan_.not_drainable.begin(), plan_.not_drainable.end(),
                   [](const NotDrainable& a, const NotDrainable& b) { return a.node < b.node; });
}

Plan Planner::Run() {
  const Clock::time_point start = Clock::now();
  plan_.numa_blind = options_.numa_blind;
  WarnIfVolumesUnknown();
  FindBeingDeleted();
  OrderDestinations();
  if (!ReinjectDeletedNodesPods() || !ReinjectRecentEvictions()) {
    Finish();
    return std::move(plan_);
  }
  std::vector<Candidate> candidates = FindCandidates();
  for (const Candidate& candidate : candidates) {
    if (plan_.timed_out || Clock::now() - start > options_.time_budget) {
      plan_.timed_out = true;
      NotDrainableNode(candidate.node, NotDrainableKind::kNotEvaluated, "NotEvaluated",
                       "the simulation time budget ran out before this node");
      continue;
    }
    ++plan_.nodes_evaluated;
    Simulate(candidate);
  }
  SelectForAction();
  if (options_.numa_blind) FindStranded();
  Finish();
  return std::move(plan_);
}

Status CheckOptions(const ClusterSnapshot& snapshot,
                    const std::map<std::string, NumaNodeState>& numa,
                    const PlannerOptions& options) {
  if (options.max_scale_down_parallelism < 0) {
    return InvalidArgumentError(fmt::format("max-scale-down-parallelism: {} is negative",
                                            options.max_scale_down_parallelism));
  }
  if (options.max_drain_parallelism < 0) {
    return InvalidArgumentError(
        fmt::format("max-drain-parallelism: {} is negative", options.max_drain_parallelism));
  }
  if (options.time_budget.count() <= 0) {
    return InvalidArgumentError(
        fmt::format("simulation time budget: {} ms is not positive", options.time_budget.count()));
  }
  const double threshold = options.eligibility.utilization_threshold;
  if (!(threshold >= 0 && threshold <= 1)) {
    return InvalidArgumentError(
        fmt::format("scale-down utilization threshold: {} is not in [0, 1]", threshold));
  }
  for (const auto& [name, state] : numa) {
    if (!snapshot.node_index.contains(name)) {
      return InvalidArgumentError(
          fmt::format("NUMA state of node {}: the snapshot has no such node (a stale "
                      "NodeResourceTopology?)",
                      name));
    }
  }
  return Status::Ok();
}

// The evicted pods of the state are placed like the snapshot's pods, so their affinity terms
// must be readable against this snapshot too (a namespaceSelector needs its Namespaces).
Status CheckEvictedPods(const ClusterSnapshot& snapshot, const PlannerState& state) {
  ErrorList errors;
  for (const RecentEviction& e : state.recent_evictions) CheckPodAffinity(snapshot, e.pod, &errors);
  if (errors.empty()) return Status::Ok();
  return errors.Result().WithContext("planner state: recentEvictions");
}

}  // namespace

std::string_view NotDrainableKindName(NotDrainableKind kind) {
  switch (kind) {
    case NotDrainableKind::kNotEligible: return "NotEligible";
    case NotDrainableKind::kBlockedByPod: return "BlockedByPod";
    case NotDrainableKind::kNoPlaceForPod: return "NoPlaceForPod";
    case NotDrainableKind::kPdbExhausted: return "PdbExhausted";
    case NotDrainableKind::kDestination: return "Destination";
    case NotDrainableKind::kBeingDeleted: return "BeingDeleted";
    case NotDrainableKind::kNotEvaluated: return "NotEvaluated";
  }
  return "Unknown";
}

StatusOr<Plan> MakePlan(const ClusterSnapshot& snapshot,
                        const std::map<std::string, NumaNodeState>& numa,
                        const PlannerOptions& options, const PlannerState& state) {
  QRM_RETURN_IF_ERROR(CheckOptions(snapshot, numa, options));
  QRM_RETURN_IF_ERROR(CheckEvictedPods(snapshot, state));
  return Planner(snapshot, numa, options, state).Run();
}

}  // namespace qrm::cluster::drain
