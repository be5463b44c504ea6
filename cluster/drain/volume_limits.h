// The scheduler's NodeVolumeLimits filter (CSILimits, kube-scheduler 1.29-1.31) for a pod the
// drain planner moves: a node takes at most so many attached volumes per CSI driver, and a pod
// whose new volumes would pass that fits there no more (Cluster Autoscaler runs the same filter
// in its simulation; on clouds the limit is the instance's disk slots, e.g. 25-39 EBS volumes).
//
// What counts, per pod not terminal (pods being deleted still count):
//   - a claim (persistentVolumeClaim, or an ephemeral volume's "<pod>-<volume>") bound to a
//     PersistentVolume with spec.csi: its driver, one volume per volumeHandle;
//   - such a PersistentVolume, or an inline pod volume, of an in-tree cloud disk
//     (in_tree_volumes.h) on a node that has a CSINode: the CSI driver it migrated to, one
//     volume per disk id (the scheduler compares the translated handles; two spellings of one
//     disk, in-tree and CSI, count twice here);
//   - a claim not bound yet, or bound to a volume that does not exist: its StorageClass's
//     provisioner (translated when in-tree), one volume per claim; none without a class.
// A volume on a node counts once however many pods there use it. Inline CSI volumes
// (spec.volumes[].csi) are not counted, as by the scheduler. Without PersistentVolumeClaims
// and PersistentVolumes in the input no claim counts.
//
// The limits of a node: its status.allocatable "attachable-volumes-csi-<driver>" entries, then
// each driver of its CSINode with spec.drivers[].allocatable.count. A driver with neither has
// no limit.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "cluster/drain/snapshot.h"

namespace qrm::cluster::drain {

// Attached volumes by limit key: the set of "<driver>/<handle>" ids on a node, or of a pod's.
using AttachedVolumes = std::map<std::string, std::set<std::string>>;
// Attach limits by limit key.
using AttachLimits = std::map<std::string, int64_t>;

// The limit key of a CSI driver, the node allocatable name "attachable-volumes-csi-<driver>";
// when that is 63 characters or more, the driver name's first 23 characters and the first 16
// hex digits of its SHA-1 stand for it (the API's resource name length).
std::string AttachLimitKey(std::string_view driver);

// The node's limits (above); empty when it has none.
AttachLimits AttachLimitsOf(const ClusterSnapshot& snapshot, const DrainNode& node);

// Whether the pod has a volume that may count (a claim, an ephemeral volume, an in-tree disk):
// most pods have none, and the planner asks for every pod on every node it tries.
bool MayAttach(const DrainPod& pod);
// Whether in-tree disks count on the node: it has a CSINode (the scheduler's migration check).
bool MigrationOn(const ClusterSnapshot& snapshot, const DrainNode& node);

// The volumes of `pod` that count against a node's limits when the pod runs there, on a node
// with or without migration; the second form asks the node.
AttachedVolumes AttachedVolumesOf(const ClusterSnapshot& snapshot, const DrainPod& pod,
                                  bool migration_on);
AttachedVolumes AttachedVolumesOf(const ClusterSnapshot& snapshot, const DrainPod& pod,
                                  const DrainNode& node);

// Whether the node's volumes, with the incoming pod's added (those already attached count
// once), stay within every limit. A key without a limit never fails.
bool WithinAttachLimits(const AttachedVolumes& attached, const AttachedVolumes& incoming,
                        const AttachLimits& limits);

// Adds the ids of `from` to `to`.
void AddAttached(AttachedVolumes& to, const AttachedVolumes& from);

}  // namespace qrm::cluster::drain
