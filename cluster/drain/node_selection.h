// The scheduler's node-level filters of a pod, as the drain planner applies them: taints and
// tolerations (TaintToleration, NodeUnschedulable) and node selection (NodeAffinity).
#pragma once

#include "cluster/drain/snapshot.h"

namespace qrm::cluster::drain {

// Whether the pod tolerates every NoSchedule / NoExecute taint of the node, and its
// spec.unschedulable (the node.kubernetes.io/unschedulable taint the scheduler assumes).
bool ToleratesNode(const DrainPod& pod, const DrainNode& node);
// Whether spec.unschedulable leaves the node open to it.
bool ToleratesUnschedulable(const DrainPod& pod, const DrainNode& node);
// Whether it tolerates the node's NoSchedule and NoExecute taints (spec.taints only).
bool ToleratesTaints(const DrainPod& pod, const DrainNode& node);
// One NodeSelectorTerm: every expression holds (an empty term matches no node).
bool TermMatches(const NodeSelectorTerm& term, const std::map<std::string, std::string>& labels);
// spec.nodeSelector and the required node affinity terms.
bool MatchesNodeSelection(const DrainPod& pod, const DrainNode& node);

}  // namespace qrm::cluster::drain
