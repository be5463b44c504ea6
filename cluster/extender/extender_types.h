// The kube-scheduler extender wire types, k8s.io/kube-scheduler/extender/v1 (types.go), with
// our names. Upstream's structs have no json tags: on the wire every key is the Go field name
// ("Pod", "NodeNames", "FailedNodes", "Host"), nothing is omitted when empty, and a nil pointer,
// map or slice is null. Go's decoder matches keys whatever their case, so older extenders'
// "pod", "nodenames", "failedNodes" are read too (extender_codec.h; docs/scheduling.md).
//
// std::optional stands where Go has a pointer or a map whose nil matters: nullopt is absent or
// null, an engaged empty value is {} or [].
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/extender/kube_objects.h"

namespace qrm::extender {

// The range of HostPriority.score an extender answers (MinExtenderPriority, MaxExtenderPriority);
// kube-scheduler multiplies it by the extender's weight.
inline constexpr int64_t kMinExtenderPriority = 0;
inline constexpr int64_t kMaxExtenderPriority = 10;

// ExtenderArgs: what the filter and prioritize verbs receive. An extender configured with
// nodeCacheCapable gets node_names and a null Nodes; others get nodes and a null NodeNames.
struct ExtenderArgs {
  std::optional<Pod> pod;                              // Pod
  std::optional<NodeList> nodes;                       // Nodes
  std::optional<std::vector<std::string>> node_names;  // NodeNames
};

// FailedNodesMap: node name -> why the pod cannot go there.
using FailedNodesMap = std::map<std::string, std::string>;

// ExtenderFilterResult: the filter verb's answer.
struct ExtenderFilterResult {
  std::optional<NodeList> nodes;                       // Nodes: the nodes that fit
  std::optional<std::vector<std::string>> node_names;  // NodeNames: the same, by name
  std::optional<FailedNodesMap> failed_nodes;          // FailedNodes
  // FailedAndUnresolvableNodes: failed, and preempting pods would not help.
  std::optional<FailedNodesMap> failed_and_unresolvable_nodes;
  std::string error;  // Error: non-empty fails the scheduling attempt
};

// HostPriority: one node's score, kMinExtenderPriority..kMaxExtenderPriority.
struct HostPriority {
  std::string host;   // Host
  int64_t score = 0;  // Score
};

// HostPriorityList: the prioritize verb's answer.
using HostPriorityList = std::vector<HostPriority>;

// MetaPod: a pod named by its UID.
struct MetaPod {
  std::string uid;  // UID
};

// Victims: the pods preemption would evict on a node, with the PodDisruptionBudgets violated.
struct Victims {
  std::vector<Pod> pods;           // Pods
  int64_t num_pdb_violations = 0;  // NumPDBViolations
};

// MetaVictims: the same by UID (what a nodeCacheCapable extender gets, and every one answers).
struct MetaVictims {
  std::vector<MetaPod> pods;       // Pods
  int64_t num_pdb_violations = 0;  // NumPDBViolations
};

// ExtenderPreemptionArgs: the preempt verb's request; one of the two maps is set, as for nodes.
struct ExtenderPreemptionArgs {
  std::optional<Pod> pod;                                              // Pod
  std::optional<std::map<std::string, Victims>> node_name_to_victims;  // NodeNameToVictims
  std::optional<std::map<std::string, MetaVictims>> node_name_to_meta_victims;
};

// ExtenderPreemptionResult: the preempt verb's answer, the victims the extender accepts.
struct ExtenderPreemptionResult {
  std::optional<std::map<std::string, MetaVictims>> node_name_to_meta_victims;
};

// ExtenderBindingArgs: the bind verb's request.
struct ExtenderBindingArgs {
  std::string pod_name;       // PodName
  std::string pod_namespace;  // PodNamespace
  std::string pod_uid;        // PodUID
  std::string node;           // Node
};

// ExtenderBindingResult: the bind verb's answer.
struct ExtenderBindingResult {
  std::string error;  // Error
};

}  // namespace qrm::extender
