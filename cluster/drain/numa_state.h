// NumaNodeState: what the drain planner knows of one node's NUMA zones, so that it can decide
// whether qrm would admit a pod there (numa_admission.h) and account for the pods it moves.
//
// Built from the node's NodeResourceTopology as qrm-advisor writes it (docs/node-report.md):
// one zone "node-<id>" of type "Node" per NUMA node, each resource's `available` as what is
// free and `capacity` as the zone's size, the zone costs as NUMA distances, and the top-level
// attributes topologyManagerPolicy / topologyManagerScope. Zones of other types are ignored.
//
// Amounts are integers: CPU in millicores, memory and hugepages in bytes, other (extended)
// resources in whole units (rounded up, as Quantity::Value does).
//
// Copying a state is cheap (a few small vectors; the NUMA distances are shared), so the
// planner can fork it before simulating a placement and drop the copy to revert.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cluster/objects/node_resource_topology.h"
#include "common/numa_mask.h"
#include "common/status.h"
#include "qrm/topology/merge.h"
#include "qrm/topology/numa_info.h"

namespace qrm::cluster::drain {

// Hints are found by trying every set of zones, so the zone count is bounded.
inline constexpr int kMaxNumaZones = 16;

struct ResourceAmount {
  int64_t free = 0;
  int64_t capacity = 0;
  friend bool operator==(const ResourceAmount&, const ResourceAmount&) = default;
};

// Who is NUMA-bound on a zone, from the zone attributes qrm-advisor writes
// (common/protocol_keys.h): the CPU and memory plugins keep NUMA-bound pods off a zone held
// exclusively or bound to by a pod of an anti-affine role, and a numa_exclusive pod off a zone
// where anyone is bound or holds dedicated CPUs. The zone's resources alone do not show that.
struct ZoneBinding {
  bool known = false;  // the NRT carried the attributes (another writer's does not)
  int64_t bound_pods = 0;
  bool exclusive = false;
  int64_t dedicated_cpu_milli = 0;
  std::vector<std::string> roles;  // of the bound pods, sorted, distinct
  friend bool operator==(const ZoneBinding&, const ZoneBinding&) = default;
};

// The free and total amounts of one NUMA zone.
struct NumaZone {
  int id = 0;
  ResourceAmount cpu_milli;
  ResourceAmount memory_bytes;
  // Every other resource of the zone (hugepages-*, qrm.io/nic, ...), by name.
  std::map<std::string, ResourceAmount> extended;
  ZoneBinding binding;
  friend bool operator==(const NumaZone&, const NumaZone&) = default;
};

struct NumaNodeState {
  std::string node;
  std::vector<NumaZone> zones;  // ascending id
  topology::Policy policy = topology::Policy::kNone;
  topology::Scope scope = topology::Scope::kContainer;
  // qrm-advisor does not publish the kubelet's policy options: the caller sets them if known.
  topology::PolicyOptions options;
  // The zone ids and, when every zone lists a cost to every zone, their distances. Shared
  // between copies: it never changes after construction.
  std::shared_ptr<const topology::NumaInfo> numa_info;

  // The zone with this id, or nullptr.
  const NumaZone* Zone(int id) const;
  NumaZone* Zone(int id);
  // The mask of every zone.
  NumaMask AllZones() const { return numa_info->DefaultAffinity(); }
};

// The amount of `resource` ("cpu", "memory" or an extended name) in `zone`; a resource the
// zone does not list has none.
ResourceAmount ZoneAmount(const NumaZone& zone, const std::string& resource);
ResourceAmount& MutableZoneAmount(NumaZone& zone, const std::string& resource);

// Checks the zones (ids distinct, in [0, 64), at most kMaxNumaZones, at least one; amounts
// 0 <= free <= capacity; binding counts not negative) and builds numa_info from `distances` (empty,
// or one row per zone in zone order). kInvalidArgument naming the node, the zone and the resource.
StatusOr<NumaNodeState> MakeNumaNodeState(std::string node, std::vector<NumaZone> zones,
                                          topology::Policy policy, topology::Scope scope,
                                          std::vector<std::vector<uint32_t>> distances = {});

// From a NodeResourceTopology. A missing policy attribute is the kubelet's default "none", a
// missing scope "container"; a zone without qrm's attributes has an unknown binding. An
// kInvalidArgument naming the node, the zone, the resource or attribute and the value: a zone
// name that is not node-<id>, a duplicate zone, resource or attribute, available above
// capacity, a negative amount, an unknown policy or scope, no NUMA zone, some but not all of
// qrm's zone attributes, or one that does not parse.
StatusOr<NumaNodeState> NumaNodeStateFromNrt(const cluster::NodeResourceTopology& nrt);

}  // namespace qrm::cluster::drain
