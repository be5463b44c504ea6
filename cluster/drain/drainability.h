// Which pods of a node must move, which go away with it, and which keep it from being drained:
// the Cluster Autoscaler's drainability rules (simulator/drainability/rules), in its order,
// with its reason texts; and whether a node is a scale-down candidate at all (utilisation,
// the scale-down-disabled annotation, the node group's minimum size).
//
// Checked against kubernetes/autoscaler at f7bb0c3623 (2026-07-31, the last master commit that
// still carried cluster-autoscaler/simulator, utils and core before they moved to
// sigs.k8s.io/cluster-autoscaler). Upstream paths below are relative to cluster-autoscaler/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/drain/snapshot.h"

namespace qrm::cluster::drain {

// utils/drain/drain.go PodSafeToEvictKey; values "true", "false" and "on-completion"
// (PodSafeToEvictOnCompletionValue).
inline constexpr std::string_view kSafeToEvictAnnotation =
    "cluster-autoscaler.kubernetes.io/safe-to-evict";
inline constexpr std::string_view kSafeToEvictOnCompletion = "on-completion";
// utils/drain/drain.go SafeToEvictLocalVolumesKey: comma-separated volume names.
inline constexpr std::string_view kSafeToEvictLocalVolumesAnnotation =
    "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes";
// utils/pod/pod.go DaemonSetPodAnnotationKey.
inline constexpr std::string_view kDaemonSetPodAnnotation =
    "cluster-autoscaler.kubernetes.io/daemonset-pod";
// core/scaledown/eligibility/eligibility.go ScaleDownDisabledKey.
inline constexpr std::string_view kScaleDownDisabledAnnotation =
    "cluster-autoscaler.kubernetes.io/scale-down-disabled";
// k8s.io/kubernetes/pkg/kubelet/types ConfigMirrorAnnotationKey (utils/pod/pod.go IsMirrorPod).
inline constexpr std::string_view kMirrorPodAnnotation = "kubernetes.io/config.mirror";

// utils/drain/drain.go PodLongTerminatingExtraThreshold (30 * time.Second).
inline constexpr int64_t kPodLongTerminatingExtraThresholdSeconds = 30;
// k8s.io/api/core/v1 DefaultTerminationGracePeriodSeconds, used when the pod sets none.
inline constexpr int64_t kDefaultTerminationGracePeriodSeconds = 30;

// Defaults are the Cluster Autoscaler's flag defaults (config/flags/flags.go).
struct DrainOptions {
  // --skip-nodes-with-system-pods (true): kube-system pods without a PDB block their node
  // until --blocking-system-pod-distruption-timeout has passed since they were created.
  bool skip_nodes_with_system_pods = true;
  // --skip-nodes-with-local-storage (true): pods with emptyDir (not Memory) or hostPath block.
  bool skip_nodes_with_local_storage = true;
  // --skip-nodes-with-custom-controller-pods (true): a controller of a kind CA does not know
  // (not ReplicationController, Job, ReplicaSet, StatefulSet) counts as none; false also
  // drops the replica-count rule (rules.go skips it then).
  bool skip_nodes_with_custom_controller_pods = true;
  // CA has no switch for this: a pod without a controller always blocks. false moves such
  // pods anyway (they are deleted, not recreated), as `kubectl drain --force` does.
  bool block_unreplicated_pods = true;
  // --min-replica-count (0): a ReplicationController or ReplicaSet with fewer replicas blocks.
  int64_t min_replica_count = 0;
  // --blocking-system-pod-distruption-timeout (time.Hour; the flag's name is spelled so): a
  // blocking kube-system pod created longer ago than this is drainable after all.
  int64_t bsp_disruption_timeout_seconds = 3600;
  // A pod deleted longer ago than its grace period (30 s when unset) plus this is left
  // behind (drain.PodLongTerminatingExtraThreshold, a constant upstream).
  int64_t long_terminating_extra_seconds = kPodLongTerminatingExtraThresholdSeconds;
};

// CA's drainability.OutcomeType (simulator/drainability/status.go) as qrm's planner uses it.
// CA answers DrainOk for daemonset and terminal pods too; GetPodsToMove (simulator/drain.go)
// files daemonset pods apart from the pods to reschedule, and terminal pods never reach it
// (utils/kubernetes/listers.go lists only non-Succeeded, non-Failed pods), so qrm reports
// both as kSkip: nothing has to find room for them elsewhere.
enum class DrainOutcome {
  kDrainable,  // DrainOk: must be moved to another node
  kSkip,       // SkipDrain: not moved, goes away with the node (daemonset, mirror, terminal, ...)
  kBlock,      // BlockDrain: the node cannot be drained
  kWait,       // WaitForCompletion: not evicted; the node goes once the pod has finished
};

// The rules, in the order they run (simulator/drainability/rules/rules.go Default);
// kNone: no rule decided (the pod is drainable).
enum class DrainRule {
  kNone,
  kMirror,
  kLongTerminating,
  kReplicaCount,
  kDaemonSet,
  kSafeToEvict,
  kTerminal,
  kOnCompletion,
  kReplicated,
  kSystem,
  kNotSafeToEvict,
  kLocalStorage,
  kPdb,
};

// utils/drain/drain.go BlockingPodReason, in its order.
enum class BlockingReason {
  kNoReason,
  kControllerNotFound,
  kMinReplicasReached,
  kNotReplicated,
  kLocalStorageRequested,
  kNotSafeToEvictAnnotation,
  kUnmovableKubeSystemPod,
  kNotEnoughPdb,
  kUnexpectedError,
};

// The rules' Name(): "Mirror", "LongTerminating", ..., "PDB"; "None" for kNone.
std::string_view DrainRuleName(DrainRule rule);
std::string_view DrainOutcomeName(DrainOutcome outcome);
// BlockingPodReason.String(): "NoReason", "ControllerNotFound", ..., "UnexpectedError".
std::string_view BlockingReasonName(BlockingReason reason);

struct PodDrainability {
  DrainOutcome outcome = DrainOutcome::kDrainable;
  DrainRule rule = DrainRule::kNone;
  // Set for blocks only, as CA sets Status.BlockingReason and Status.Error only then.
  BlockingReason blocking_reason = BlockingReason::kNoReason;
  std::string reason;  // CA's error text ("pod with local storage present: web-1")
};

// The first rule that decides, in CA's order. `now` is Unix seconds.
PodDrainability EvaluatePod(const ClusterSnapshot& snapshot, const DrainPod& pod,
                            const DrainOptions& options, int64_t now);

struct NodeDrainability {
  std::string node;
  bool drainable = true;
  // When not drainable: the first blocking pod (namespace/name), its rule and reason.
  std::string blocking_pod;
  DrainRule rule = DrainRule::kNone;
  BlockingReason blocking_reason = BlockingReason::kNoReason;
  std::string reason;
  // Indexes into snapshot.pods, in snapshot order.
  std::vector<size_t> pods_to_move;
  std::vector<size_t> pods_skipped;
  // safe-to-evict: "on-completion" pods (CA's PodMoveInfo.OnCompletionPods): not evicted; the
  // node is removed once they finish.
  std::vector<size_t> pods_awaited;
};

// Every pod bound to `node` (snapshot indexes must be current).
NodeDrainability EvaluateNode(const ClusterSnapshot& snapshot, const DrainNode& node,
                              const DrainOptions& options, int64_t now);

// Whether a node is a scale-down candidate before any simulation (CA's eligibility check,
// core/scaledown/eligibility/eligibility.go, and the min-size check of
// core/scaledown/unneeded/nodes.go).
struct EligibilityOptions {
  // --scale-down-utilization-threshold (config.DefaultScaleDownUtilizationThreshold, 0.5):
  // nodes above it are not candidates; at or below it they are.
  double utilization_threshold = 0.5;
  // --ignore-daemonsets-utilization, --ignore-mirror-pods-utilization (both false): such
  // pods' requests are taken off allocatable instead of counting as used.
  bool ignore_daemonsets_utilization = false;
  bool ignore_mirror_pods_utilization = false;
  // Node group -> minimum size (the cloud provider's MinSize); groups not listed have none.
  std::map<std::string, int64_t> min_group_size;
};

struct NodeEligibility {
  bool eligible = false;
  // max(cpu, memory) of the pods' requests over allocatable (CA's utilization.Calculate).
  double utilization = 0;
  // CA's simulator.UnremovableReason name when not eligible ("ScaleDownDisabledAnnotation",
  // "NotUnderutilized", "NodeGroupMinSizeReached", "UnexpectedError"); "" when eligible.
  std::string_view unremovable_reason;
  std::string reason;  // why not, when not eligible
};

// `now` (Unix seconds) leaves long-terminating pods out of the utilisation, as CA does.
NodeEligibility EvaluateEligibility(const ClusterSnapshot& snapshot, const DrainNode& node,
                                    const EligibilityOptions& options, int64_t now);

}  // namespace qrm::cluster::drain
