// A pod assigned to a node, as the cache keeps it (podAssignCache.assign, pod_assign_cache.go).
#pragma once

#include <cstdint>

#include "cluster/loadaware/config.h"
#include "cluster/loadaware/inputs.h"
#include "cluster/loadaware/node_load.h"

namespace qrm::cluster::loadaware {

// util.IsPodTerminated: Succeeded or Failed.
bool IsTerminated(const PodInput& pod);

// Whether the cache keeps the pod at all: not terminated, not a reservation's reserve pod.
bool IsAssignable(const PodInput& pod);

// The pod's estimate (nullopt when all zero), assignment time (its PodScheduled time, else
// `now`), estimation deadline and prod-ness. A pod whose quantities are bad keeps the error,
// which its node then reports.
AssignedPod MakeAssignedPod(const Config& config, const PodInput& pod, TimePoint now);

// A hash of what PodInput carries of the pod's spec and conditions: Koordinator re-assigns an
// updated pod only when its spec or conditions changed.
uint64_t SpecAndConditionsFingerprint(const PodInput& pod);

}  // namespace qrm::cluster::loadaware
