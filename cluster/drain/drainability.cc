#include "cluster/drain/drainability.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

#include <fmt/format.h>

namespace qrm::cluster::drain {
namespace {

// What every rule sees.
struct RuleInput {
  const ClusterSnapshot& snapshot;
  const DrainPod& pod;
  const DrainOptions& options;
  int64_t now;
};

using Decision = std::optional<PodDrainability>;

// CA's rules set no text for the outcomes that do not block (drainability.NewDrainableStatus,
// NewSkipStatus, NewWaitStatus carry no error).
Decision Skip(DrainRule rule) {
  return PodDrainability{DrainOutcome::kSkip, rule, {}, {}};
}
Decision Move(DrainRule rule) {
  return PodDrainability{DrainOutcome::kDrainable, rule, {}, {}};
}
Decision Wait(DrainRule rule) {
  return PodDrainability{DrainOutcome::kWait, rule, {}, {}};
}
Decision Block(DrainRule rule, BlockingReason why, std::string text) {
  return PodDrainability{DrainOutcome::kBlock, rule, why, std::move(text)};
}

std::string_view Annotation(const DrainPod& pod, std::string_view key) {
  auto it = pod.annotations.find(std::string(key));
  return it == pod.annotations.end() ? std::string_view() : std::string_view(it->second);
}

// utils/pod/pod.go IsDaemonSetPod: a DaemonSet controller or the daemonset-pod annotation.
bool IsDaemonSetPod(const DrainPod& pod) {
  const OwnerReference* c = pod.Controller();
  return (c != nullptr && c->kind == "DaemonSet") ||
         Annotation(pod, kDaemonSetPodAnnotation) == "true";
}

// utils/drain/drain.go IsPodLongTerminating: deleted, and deletion + grace period + the extra
// threshold lies before now.
bool IsLongTerminating(const DrainPod& pod, int64_t extra_seconds, int64_t now) {
  if (!pod.deletion_time) return false;
  int64_t grace = pod.grace_period_seconds.value_or(kDefaultTerminationGracePeriodSeconds);
  return *pod.deletion_time + grace + extra_seconds < now;
}

// rules/mirror/rule.go: mirror pods are skipped.
Decision MirrorRule(const RuleInput& in) {
  if (!in.pod.is_mirror) return std::nullopt;
  return Skip(DrainRule::kMirror);
}

// rules/longterminating/rule.go: the kubelet is not going to finish such a pod, and waiting
// for it would hold the node forever; it is skipped.
Decision LongTerminatingRule(const RuleInput& in) {
  if (!IsLongTerminating(in.pod, in.options.long_terminating_extra_seconds, in.now)) {
    return std::nullopt;
  }
  return Skip(DrainRule::kLongTerminating);
}

// rules/replicacount/rule.go. CA runs it only with listers; qrm's listers are
// snapshot.controller_replicas (ReplicationControllers and ReplicaSets only), so with none
// the rule has nothing to say, and it cannot check that a Job, StatefulSet or DaemonSet
// still exists as CA does. The error texts are CA's: both kinds say "replication controller",
// and the missing-controller error carries the lister's NotFound message. (CA formats the
// replica count from a pointer, so its text shows an address; qrm shows the count.)
Decision ReplicaCountRule(const RuleInput& in) {
  if (in.snapshot.controller_replicas.empty()) return std::nullopt;
  const OwnerReference* c = in.pod.Controller();
  if (c == nullptr) return std::nullopt;
  bool rc = c->kind == "ReplicationController";
  // CA tests ReplicationController first, then the daemonset-pod case, then ReplicaSet.
  if (!rc && (IsDaemonSetPod(in.pod) || c->kind != "ReplicaSet")) return std::nullopt;
  auto it = in.snapshot.controller_replicas.find(
      fmt::format("{}/{}/{}", in.pod.namespace_, c->kind, c->name));
  if (it == in.snapshot.controller_replicas.end()) {
    return Block(
        DrainRule::kReplicaCount, BlockingReason::kControllerNotFound,
        fmt::format("replication controller for {} is not available, err: {} \"{}\" "
                    "not found",
                    in.pod.Key(), rc ? "replicationcontroller" : "replicaset.apps", c->name));
  }
  if (it->second >= in.options.min_replica_count) return std::nullopt;
  return Block(DrainRule::kReplicaCount, BlockingReason::kMinReplicasReached,
               fmt::format("replication controller for {} has too few replicas spec: {} min: {}",
                           in.pod.Key(), it->second, in.options.min_replica_count));
}

// rules/daemonset/rule.go: DrainOk in CA, filed apart from the pods to reschedule
// (simulator/drain.go GetPodsToMove); qrm: kSkip (see DrainOutcome).
Decision DaemonSetRule(const RuleInput& in) {
  if (!IsDaemonSetPod(in.pod)) return std::nullopt;
  return Skip(DrainRule::kDaemonSet);
}

// rules/safetoevict/rule.go: safe-to-evict "true" is drainable past every blocking rule.
Decision SafeToEvictRule(const RuleInput& in) {
  if (Annotation(in.pod, kSafeToEvictAnnotation) != "true") return std::nullopt;
  return Move(DrainRule::kSafeToEvict);
}

// rules/terminal/rule.go with utils/drain/drain.go IsPodTerminal: Failed always; Succeeded
// with restartPolicy Never or OnFailure. The snapshot has no restartPolicy, and a pod with
// restartPolicy Always does not reach Succeeded, so both phases count. DrainOk in CA; qrm:
// kSkip (see DrainOutcome).
Decision TerminalRule(const RuleInput& in) {
  if (in.pod.phase != "Succeeded" && in.pod.phase != "Failed") return std::nullopt;
  return Skip(DrainRule::kTerminal);
}

// rules/oncompletion/rule.go: safe-to-evict "on-completion" waits for the pod to finish.
Decision OnCompletionRule(const RuleInput& in) {
  if (Annotation(in.pod, kSafeToEvictAnnotation) != kSafeToEvictOnCompletion) {
    return std::nullopt;
  }
  return Wait(DrainRule::kOnCompletion);
}

// rules/replicated/rule.go replicatedKind (DaemonSet is not one of them: the daemonset rule
// has decided for those pods already).
bool ReplicatedKind(std::string_view kind) {
  return kind == "ReplicationController" || kind == "Job" || kind == "ReplicaSet" ||
         kind == "StatefulSet";
}

// rules/replicated/rule.go: a pod without a controller (or, with
// --skip-nodes-with-custom-controller-pods, with one of another kind) is not replicated.
Decision ReplicatedRule(const RuleInput& in) {
  const OwnerReference* c = in.pod.Controller();
  bool replicated = c != nullptr &&
                    (!in.options.skip_nodes_with_custom_controller_pods || ReplicatedKind(c->kind));
  if (replicated || !in.options.block_unreplicated_pods) return std::nullopt;
  return Block(DrainRule::kReplicated, BlockingReason::kNotReplicated,
               fmt::format("{} is not replicated", in.pod.Key()));
}

// rules/system/rule.go: a kube-system pod no PDB matches blocks, unless it was created longer
// ago than the blocking-system-pod disruption timeout; then it is drainable.
Decision SystemRule(const RuleInput& in) {
  if (!in.options.skip_nodes_with_system_pods || in.pod.namespace_ != "kube-system" ||
      !in.snapshot.PdbsFor(in.pod).empty()) {
    return std::nullopt;
  }
  if (in.pod.creation_time &&
      in.now > *in.pod.creation_time + in.options.bsp_disruption_timeout_seconds) {
    return Move(DrainRule::kSystem);
  }
  return Block(
      DrainRule::kSystem, BlockingReason::kUnmovableKubeSystemPod,
      "non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: " + in.pod.name);
}

// rules/notsafetoevict/rule.go: safe-to-evict "false" blocks.
Decision NotSafeToEvictRule(const RuleInput& in) {
  if (Annotation(in.pod, kSafeToEvictAnnotation) != "false") return std::nullopt;
  return Block(DrainRule::kNotSafeToEvict, BlockingReason::kNotSafeToEvictAnnotation,
               "pod annotated as not safe to evict present: " + in.pod.name);
}

// Volumes named in safe-to-evict-local-volumes (comma separated) do not count
// (utils/drain/drain.go getNonBlockingVolumes).
bool ListedSafe(const DrainPod& pod, const std::string& volume) {
  std::string_view list = Annotation(pod, kSafeToEvictLocalVolumesAnnotation);
  while (!list.empty()) {
    size_t comma = list.find(',');
    if (list.substr(0, comma) == volume) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

// rules/localstorage/rule.go with utils/drain/drain.go HasBlockingLocalStorage: a hostPath or
// an emptyDir not on Memory, not listed in safe-to-evict-local-volumes.
Decision LocalStorageRule(const RuleInput& in) {
  if (!in.options.skip_nodes_with_local_storage) return std::nullopt;
  for (const Volume& v : in.pod.volumes) {
    bool local = v.kind == VolumeKind::kHostPath ||
                 (v.kind == VolumeKind::kEmptyDir && v.medium != "Memory");
    if (local && !ListedSafe(in.pod, v.name)) {
      return Block(DrainRule::kLocalStorage, BlockingReason::kLocalStorageRequested,
                   "pod with local storage present: " + in.pod.name);
    }
  }
  return std::nullopt;
}

// rules/pdb/rule.go: a matching PDB with fewer than one disruption allowed blocks.
Decision PdbRule(const RuleInput& in) {
  for (const DrainPdb* pdb : in.snapshot.PdbsFor(in.pod)) {
    if (pdb->disruptions_allowed < 1) {
      return Block(DrainRule::kPdb, BlockingReason::kNotEnoughPdb,
                   fmt::format("not enough pod disruption budget to move {}", in.pod.Key()));
    }
  }
  return std::nullopt;
}

// Gates of simulator/drainability/rules/rules.go Default: a rule left out of CA's list.
bool Enabled(DrainRule rule, const DrainOptions& o) {
  switch (rule) {
    case DrainRule::kReplicaCount: return o.skip_nodes_with_custom_controller_pods;
    case DrainRule::kSystem: return o.skip_nodes_with_system_pods;
    case DrainRule::kLocalStorage: return o.skip_nodes_with_local_storage;
    default: return true;
  }
}

struct RuleEntry {
  DrainRule rule;
  Decision (*run)(const RuleInput&);
};

// CA's order (simulator/drainability/rules/rules.go Default); the first decision wins. None
// of these rules sets Status.Overrides, so CA's override pass never changes the result.
constexpr RuleEntry kRules[] = {
    {DrainRule::kMirror, MirrorRule},
    {DrainRule::kLongTerminating, LongTerminatingRule},
    {DrainRule::kReplicaCount, ReplicaCountRule},
    // Interrupting checks.
    {DrainRule::kDaemonSet, DaemonSetRule},
    {DrainRule::kSafeToEvict, SafeToEvictRule},
    {DrainRule::kTerminal, TerminalRule},
    {DrainRule::kOnCompletion, OnCompletionRule},
    // Blocking checks.
    {DrainRule::kReplicated, ReplicatedRule},
    {DrainRule::kSystem, SystemRule},
    {DrainRule::kNotSafeToEvict, NotSafeToEvictRule},
    {DrainRule::kLocalStorage, LocalStorageRule},
    {DrainRule::kPdb, PdbRule},
};

}  // namespace

std::string_view DrainRuleName(DrainRule rule) {
  switch (rule) {
    case DrainRule::kNone: return "None";
    case DrainRule::kMirror: return "Mirror";
    case DrainRule::kLongTerminating: return "LongTerminating";
    case DrainRule::kReplicaCount: return "ReplicaCount";
    case DrainRule::kDaemonSet: return "DaemonSet";
    case DrainRule::kSafeToEvict: return "SafeToEvict";
    case DrainRule::kTerminal: return "Terminal";
    case DrainRule::kOnCompletion: return "OnCompletion";
    case DrainRule::kReplicated: return "Replicated";
    case DrainRule::kSystem: return "System";
    case DrainRule::kNotSafeToEvict: return "NotSafeToEvict";
    case DrainRule::kLocalStorage: return "LocalStorage";
    case DrainRule::kPdb: return "PDB";
  }
  return "unknown";
}

std::string_view DrainOutcomeName(DrainOutcome outcome) {
  switch (outcome) {
    case DrainOutcome::kDrainable: return "drainable";
    case DrainOutcome::kSkip: return "skip";
    case DrainOutcome::kBlock: return "block";
    case DrainOutcome::kWait: return "wait";
  }
  return "unknown";
}

std::string_view BlockingReasonName(BlockingReason reason) {
  switch (reason) {
    case BlockingReason::kNoReason: return "NoReason";
    case BlockingReason::kControllerNotFound: return "ControllerNotFound";
    case BlockingReason::kMinReplicasReached: return "MinReplicasReached";
    case BlockingReason::kNotReplicated: return "NotReplicated";
    case BlockingReason::kLocalStorageRequested: return "LocalStorageRequested";
    case BlockingReason::kNotSafeToEvictAnnotation: return "NotSafeToEvictAnnotation";
    case BlockingReason::kUnmovableKubeSystemPod: return "UnmovableKubeSystemPod";
    case BlockingReason::kNotEnoughPdb: return "NotEnoughPdb";
    case BlockingReason::kUnexpectedError: return "UnexpectedError";
  }
  return "unknown";
}

PodDrainability EvaluatePod(const ClusterSnapshot& snapshot, const DrainPod& pod,
                            const DrainOptions& options, int64_t now) {
  RuleInput in{snapshot, pod, options, now};
  for (const RuleEntry& r : kRules) {
    if (!Enabled(r.rule, options)) continue;
    if (Decision d = r.run(in)) return *std::move(d);
  }
  return PodDrainability{};
}

NodeDrainability EvaluateNode(const ClusterSnapshot& snapshot, const DrainNode& node,
                              const DrainOptions& options, int64_t now) {
  NodeDrainability out;
  out.node = node.name;
  auto it = snapshot.pods_by_node.find(node.name);
  if (it == snapshot.pods_by_node.end()) return out;
  for (size_t i : it->second) {
    PodDrainability d = EvaluatePod(snapshot, snapshot.pods[i], options, now);
    switch (d.outcome) {
      case DrainOutcome::kBlock:
        out.drainable = false;
        out.blocking_pod = snapshot.pods[i].Key();
        out.rule = d.rule;
        out.blocking_reason = d.blocking_reason;
        out.reason = std::move(d.reason);
        out.pods_to_move.clear();
        out.pods_skipped.clear();
        out.pods_awaited.clear();
        return out;
      case DrainOutcome::kDrainable: out.pods_to_move.push_back(i); break;
      case DrainOutcome::kWait: out.pods_awaited.push_back(i); break;
      case DrainOutcome::kSkip: out.pods_skipped.push_back(i); break;
    }
  }
  return out;
}

namespace {

// One resource's utilisation the way simulator/utilization/info.go
// CalculateUtilizationOfResource computes it: ignored daemonset and mirror pods' requests come
// off allocatable, long-terminating pods count for nothing. Terminal pods count for nothing
// either: CA never sees them (utils/kubernetes/listers.go lists only pods that are neither
// Succeeded nor Failed).
double ResourceUtilization(const ClusterSnapshot& snapshot, const DrainNode& node,
                           const EligibilityOptions& options, int64_t now,
                           int64_t Resources::*field) {
  int64_t requested = 0, ignored = 0;
  auto it = snapshot.pods_by_node.find(node.name);
  if (it != snapshot.pods_by_node.end()) {
    for (size_t i : it->second) {
      const DrainPod& pod = snapshot.pods[i];
      if (pod.phase == "Succeeded" || pod.phase == "Failed") continue;
      int64_t value = pod.requests.*field;
      if ((options.ignore_daemonsets_utilization && IsDaemonSetPod(pod)) ||
          (options.ignore_mirror_pods_utilization && pod.is_mirror)) {
        ignored = SatAdd(ignored, value);
        continue;
      }
      if (IsLongTerminating(pod, kPodLongTerminatingExtraThresholdSeconds, now)) continue;
      requested = SatAdd(requested, value);
    }
  }
  int64_t capacity = SatAdd(node.allocatable.*field, -ignored);
  if (capacity <= 0) return requested > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  return static_cast<double>(requested) / static_cast<double>(capacity);
}

// core/scaledown/unneeded/nodes.go verifyMinSize: size (less deletions in progress, none
// here) at or below the group's minimum keeps the node.
std::optional<std::string> GroupAtMinimum(const ClusterSnapshot& snapshot, const DrainNode& node,
                                          const EligibilityOptions& options) {
  if (!node.node_group) return std::nullopt;
  auto min = options.min_group_size.find(*node.node_group);
  if (min == options.min_group_size.end()) return std::nullopt;
  auto size = std::count_if(snapshot.nodes.begin(), snapshot.nodes.end(),
                            [&](const DrainNode& n) { return n.node_group == node.node_group; });
  if (size > min->second) return std::nullopt;
  return fmt::format("node group min size reached: node group {} has {} nodes, min size {}",
                     *node.node_group, size, min->second);
}

}  // namespace

// core/scaledown/eligibility/eligibility.go unremovableReasonAndNodeUtilization, in its order:
// the annotation, the utilisation (an error there is UnexpectedError), the threshold; then the
// node group's minimum size (core/scaledown/unneeded/nodes.go).
NodeEligibility EvaluateEligibility(const ClusterSnapshot& snapshot, const DrainNode& node,
                                    const EligibilityOptions& options, int64_t now) {
  NodeEligibility out;
  auto disabled = node.annotations.find(std::string(kScaleDownDisabledAnnotation));
  if (disabled != node.annotations.end() && disabled->second == "true") {
    out.unremovable_reason = "ScaleDownDisabledAnnotation";
    out.reason = "the node is marked as no scale down";
    return out;
  }
  // utilization.CalculateUtilizationOfResource: "%v is 0 at %s", cpu checked first.
  for (auto [name, value] :
       {std::pair<std::string_view, int64_t>{"cpu", node.allocatable.cpu_milli},
        {"memory", node.allocatable.memory_bytes}}) {
    if (value <= 0) {
      out.unremovable_reason = "UnexpectedError";
      out.reason = fmt::format("{} is 0 at {}", name, node.name);
      return out;
    }
  }
  double cpu = ResourceUtilization(snapshot, node, options, now, &Resources::cpu_milli);
  double memory = ResourceUtilization(snapshot, node, options, now, &Resources::memory_bytes);
  // utilization.Calculate: cpu when it is strictly higher, memory otherwise.
  std::string_view resource = cpu > memory ? "cpu" : "memory";
  out.utilization = std::max(cpu, memory);
  // isNodeAtOrBelowUtilizationThreshold: only utilisation above the threshold keeps the node.
  if (out.utilization > options.utilization_threshold) {
    out.unremovable_reason = "NotUnderutilized";
    out.reason = fmt::format(
        "{} requested ({:.6g}% of allocatable) is above the scale-down utilization threshold",
        resource, out.utilization * 100);
    return out;
  }
  if (std::optional<std::string> why = GroupAtMinimum(snapshot, node, options)) {
    out.unremovable_reason = "NodeGroupMinSizeReached";
    out.reason = *why;
    return out;
  }
  out.eligible = true;
  return out;
}

}  // namespace qrm::cluster::drain
