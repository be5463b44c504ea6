// BuildNodeResourceTopology: this node's NodeResourceTopology (docs/node-report.md) from what
// qrm-host answers on its admin socket: GetAllocatable (each plugin resource's capacity and
// allocatable per NUMA node, the topology manager's policy and scope, the NUMA distances) and
// ListAllocations (what each container holds, and where).
//
// One zone "node-<id>" of type "Node" per NUMA node, with costs (the distances) and, per
// resource, capacity, allocatable and available = allocatable - what the containers hold on
// that node (never below 0). What a container holds: its allocated quantity, except CPU of a
// shared pool (every level but dedicated_cores), where the CPU plugin names the whole pool and
// the container holds its request (system_cores: nothing when CPUs are reserved, where they
// run). Where it is placed: its topology_assignments (exact
// amounts per node; a pool share in proportion to them); else its first resource hint's nodes
// (split evenly); else every node (split evenly: a shared pool spans them).
//
// Each zone also carries qrm's attributes (common/protocol_keys.h): how many pods have a
// NUMA-bound container there (where its memory, or a dedicated container's CPUs, are bound: the
// first hint of each, else its assignments), whether one holds it exclusively, their roles,
// and the CPUs dedicated_cores containers hold there; the drain planner reads them to predict
// the plugins' exclusivity and role anti-affinity. The policy and scope are the top-level
// attributes the NodeResourceTopologyMatch plugin reads.
#pragma once

#include <string>

#include "api/admin_v1.pb.h"
#include "cluster/objects/node_resource_topology.h"
#include "common/status.h"

namespace qrm::advisor {

// kDataLoss naming the resource and node when qrm-host's figures contradict themselves
// (a negative amount, a quantity on a NUMA node the machine does not have).
StatusOr<cluster::NodeResourceTopology> BuildNodeResourceTopology(
    const std::string& node_name, const admin::v1::GetAllocatableResponse& allocatable,
    const admin::v1::ListAllocationsResponse& allocations);

// A plugin's amount of `resource` as a Kubernetes quantity: CPU in millicores, memory (and
// hugepages) in bytes, other resources as integers when whole, else in thousandths.
Quantity ResourceQuantity(const std::string& resource, double amount);

}  // namespace qrm::advisor
