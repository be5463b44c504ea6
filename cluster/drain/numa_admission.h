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
// A pod whose QoS does not resolve (NumaPodRequest::qos_error) is refused with kQosUnresolved:
// qrm-host fails its CreateContainer (reason CreateContainerError).
//
// Exclusivity, as both plugins apply it, from the zones' bindings (numa_state.h): a NUMA-bound
// pod's CPU and memory hints leave out zones held exclusively; a numa_exclusive pod's also
// leave out zones where a NUMA-bound pod is, or (dedicated_cores) where dedicated CPUs are
// held, and zones whose binding is unknown (its NRT lacks qrm's attributes). Its dedicated CPUs
// take every whole free CPU of its zones, as the CPU plugin gives it every CPU there; that its
// request must fit what the zone shows free errs on the safe side (the plugin moves the shared
// pool's share elsewhere). A NUMA-bound shared_cores pod's CPU comes from its zones' pool share
// (the plugin runs it on their shared CPUs). An admitted placement records what it binds, so
// the next pod sees it; the pod's own containers never keep each other away.
//
// Role anti-affinity likewise: a NUMA-bound pod's hints leave out zones a pod of a role
// anti-affine to its own is bound to (the zones' roles, the pod's anti-affine roles).
//
// Not modelled: the CPU plugin's reserve for the shared pool (one CPU) and an explicitly sized
// reclaimed pool (NRT `available` does not show it). The first matters only where no pod but
// dedicated ones requests CPU: any pool request takes a whole CPU out of the free whole CPUs.
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
  bool numa_exclusive = false;  // implies binding, as qrm's resolver reads it
  // Why the pod's QoS does not resolve ("" when it does): qrm-host refuses such a pod.
  std::string qos_error;
  // Its pod role, and the roles it may not share a NUMA zone with (DrainPod's).
  std::string role;
  std::vector<std::string> anti_affine_roles;
  bool anti_affine_to_all_roles = false;
  std::vector<NumaContainerRequest> init_containers;
  std::vector<NumaContainerRequest> containers;
};

enum class Refusal {
  kNone,
  // The merge did not admit: the kubelet's "TopologyAffinityError".
  kTopologyAffinity,
  // The node, or the chosen zones, lack the resources.
  kOutOfResources,
  // The pod's QoS does not resolve: qrm-host fails its CreateContainer.
  kQosUnresolved,
};

// What a placed pod takes from one zone.
struct ZoneTake {
  int zone = 0;
  std::map<std::string, int64_t> amounts;  // "cpu" (milli), "memory" (bytes), extended
  // Its NUMA-bound containers are bound here (one more bound pod, of role `role`),
  // exclusively or not.
  bool binds = false;
  bool exclusive = false;
  std::string role;
  int64_t dedicated_cpu_milli = 0;  // of amounts["cpu"], what dedicated_cores containers hold
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
  // Ascending zone: the zones something is taken from or the pod is bound to.
  std::vector<ZoneTake> takes;
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
