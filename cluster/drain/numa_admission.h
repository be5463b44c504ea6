// Would qrm admit this pod on this node? The drain planner's stand-in for the kubelet's
// topology manager with qrm's plugins as hint providers, on a NumaNodeState.
//
// Hints, per resource, as qrm's plugins build them (docs/cpu-plugin.md, docs/memory-plugin.md,
// docs/plugin-authoring.md); every hint is a set of zones whose free amount covers the request:
//   cpu     dedicated_cores with numa_binding: preferred are the fitting sets with the fewest
//           zones. dedicated_cores without it: the kubelet static policy's rule, preferred are
//           the sets as narrow as the narrowest whose capacity could hold the request. Dedicated
//           CPUs are whole: the request is rounded up and only whole free CPUs count. Other
//           QoS levels: no preference.
//   memory  numa_binding (dedicated_cores or shared_cores): preferred are the fitting sets with
//           the fewest zones. Otherwise no preference.
//   others  a resource the zones list (a plugin's, e.g. qrm.io/nic; hugepages-*): fitting sets, the
//           narrowest preferred. A resource no zone lists is not qrm's: no preference, not
//           accounted here.
// An empty list means the resource cannot be had now. The lists go through qrm's own merge
// (qrm/topology/merge.h) under the node's policy, per container (scope container: init
// containers first, then app containers, each one's resources taken before the next is
// admitted) or once for the pod (scope pod: per resource the larger of the biggest init
// container and the sum of the app containers, as the kubelet sizes pod-scope requests).
//
// A merge that does not admit refuses the pod with the kubelet's TopologyAffinityError. An
// admitted container takes each hinted resource from the merged affinity's zones, filling them
// in ascending id order (as qrm's memory plugin splits); without an affinity (policy none, or an
// "any" result) from the resource's own first preferred hint, as a plugin does when Allocate
// gets no hint. A resource that does not fit there refuses the pod with kOutOfResources (the
// plugin's Allocate would fail). Resources without a preference (the shared pool) only need to
// fit in the node's total and are taken from the zones in proportion to what each has free.
//
// Not modelled: numa_exclusive and role anti-affinity (the NRT does not say who holds a zone),
// the CPU plugin's reserve for the reclaimed and shared pools (NRT `available` does not show it).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/drain/numa_state.h"
#include "common/numa_mask.h"
#include "common/status.h"

namespace qrm::cluster::drain {

enum class NumaQos { kShared, kDedicated, kReclaimed, kSystem };

// What one container asks for (its requests; limits do not matter to admission).
struct NumaContainerRequest {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  std::map<std::string, int64_t> extended;  // other resources, whole units or bytes
};

struct NumaPodRequest {
  std::string pod;  // namespace/name, for messages
  NumaQos qos = NumaQos::kShared;
  bool numa_binding = false;
  std::vector<NumaContainerRequest> init_containers;
  std::vector<NumaContainerRequest> containers;
};

enum class Refusal {
  kNone,
  // The merge did not admit: the kubelet's "TopologyAffinityError".
  kTopologyAffinity,
  // The node, or the chosen zones, lack the resources.
  kOutOfResources,
};

// What a placed pod takes from one zone.
struct ZoneTake {
  int zone = 0;
  std::map<std::string, int64_t> amounts;  // "cpu" (milli), "memory" (bytes), extended
  friend bool operator==(const ZoneTake&, const ZoneTake&) = default;
};

struct NumaPlacement {
  bool admitted = false;
  Refusal refusal = Refusal::kNone;
  // For a refusal: the kubelet's reason and qrm's explanation, naming the node, pod, container
  // and resource.
  std::string reason;
  std::string message;
  // The NUMA zones the pod's hinted resources come from (empty when none is hinted).
  NumaMask nodes;
  // Each container's merged affinity; std::nullopt for "any" (no alignment).
  std::map<std::string, std::optional<NumaMask>> container_affinity;
  std::vector<ZoneTake> takes;  // ascending zone, only zones something is taken from
};

inline constexpr const char* kTopologyAffinityErrorReason = "TopologyAffinityError";
inline constexpr const char* kTopologyAffinityErrorMessage =
    "Resources cannot be allocated with Topology locality";

// Decides admission; the state is not changed. kInvalidArgument naming the pod, container and
// resource for a negative request or a pod without containers; the merge's own error for
// prefer-closest-numa-nodes without distances.
StatusOr<NumaPlacement> Admit(const NumaNodeState& state, const NumaPodRequest& pod);

// Takes an admitted placement's resources from `state`. kFailedPrecondition naming the node,
// zone and resource when the placement was refused or no longer fits (made on another state).
Status Place(NumaNodeState& state, const NumaPlacement& placement);

}  // namespace qrm::cluster::drain
