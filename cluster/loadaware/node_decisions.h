// Filter and Score of one node (Plugin.Filter and Plugin.Score, load_aware.go), over the state
// the cache precomputed, for an incoming pod estimated once per request.
//
// Input errors of qrm's (docs/loadaware-cases.md) are reported at the step where the bad value
// would first change the decision: a bad usage-thresholds annotation when the thresholds are
// chosen; a bad NodeMetric or assigned pod, and a bad allocatable, when the usage is compared.
// A decision Koordinator reaches without the bad value is therefore unchanged.
#pragma once

#include <string_view>

#include "cluster/loadaware/config.h"
#include "cluster/loadaware/inputs.h"
#include "cluster/loadaware/node_load.h"
#include "cluster/loadaware/priority.h"
#include "cluster/loadaware/resource_vector.h"
#include "cluster/loadaware/verdict.h"
#include "common/status.h"

namespace qrm::cluster::loadaware {

// The pod being scheduled, as every node's filter and score read it (CycleState's
// IncomingPodEstimated, plus the pod's priority class and DaemonSet ownership).
struct IncomingPod {
  ResourceVector estimate{};
  PriorityClass priority = PriorityClass::kNone;
  bool daemonset = false;
};

// Errors when the pod's quantities are bad (qrm; Koordinator would log and go on without the
// pod's estimate in the filter and score every node 0).
StatusOr<IncomingPod> PrepareIncoming(const Config& config, const PodInput& pod);

// `node` is nullptr when the cache has nothing for `name`.
FilterVerdict FilterNode(const Config& config, const IncomingPod& pod, std::string_view name,
                         const NodeLoad* node, TimePoint now);
NodeScore ScoreNode(const Config& config, const IncomingPod& pod, std::string_view name,
                    const NodeLoad* node, TimePoint now);

}  // namespace qrm::cluster::loadaware
