// Writes a cluster snapshot back as `kubectl get -o json` would print it, so that what the
// planner holds can be stored (the planner's state file keeps evicted pods as Pod objects),
// generated (synthetic clusters for the bench and the fuzz seeds) and read again by
// snapshot_json.h with the same field values.
//
// Only the fields DrainNode, DrainPod and DrainPdb keep are written; quantities as plain
// integers (cpu "<n>m", memory and other resources in whole units). The derived pod fields
// (is_mirror, pod_role, qos_level, numa_binding, numa_exclusive, qos_error) are not written:
// the decoder derives them from the labels and annotations, which are written as they are. A node's
// group is written only as the labels hold it. A pod's effective request beyond what its containers
// add up to is written as spec.overhead, the one place the decoder adds it from. Times are RFC 3339
// in UTC; one outside the years 0000-9999 (which the decoder accepts through a numeric offset) is
// written as the nearest time inside them.
#pragma once

#include <string>

#include "cluster/drain/snapshot.h"

namespace qrm::cluster::drain {

// One `{"apiVersion":"v1","kind":"List","items":[...]}` with the nodes, then the pods, then
// the PodDisruptionBudgets (policy/v1), each in snapshot order, then the ReplicaSets and
// ReplicationControllers of controller_replicas (their replica counts), the Namespaces (their
// labels), the PersistentVolumeClaims, the PersistentVolumes, the StorageClasses and the
// CSINodes (storage.k8s.io/v1). claims_listed and
// volumes_listed without claims or volumes cannot be written (a List has no empty list of a
// kind in it).
std::string WriteSnapshotJson(const ClusterSnapshot& snapshot);

// One Pod object (kind and apiVersion included).
std::string WritePodJson(const DrainPod& pod);

}  // namespace qrm::cluster::drain
