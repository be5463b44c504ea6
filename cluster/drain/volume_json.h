// Reading the PersistentVolumeClaims and PersistentVolumes of the drain planner's input: what
// the volume topology check (volume_topology.h) uses of them.
#pragma once

#include "cluster/drain/error_list.h"
#include "cluster/drain/snapshot.h"
#include "cluster/objects/json_io.h"
#include "common/status.h"

namespace qrm::cluster::drain {

// A PersistentVolumeClaim (v1): its namespace, name, spec.volumeName and class.
Status DecodeClaim(const json::Field& item, ClusterSnapshot* snapshot);
// A PersistentVolume (v1): its name, labels, spec.nodeAffinity.required.nodeSelectorTerms and
// the disk it attaches (spec.csi or an in-tree cloud disk).
Status DecodeVolume(const json::Field& item, ClusterSnapshot* snapshot);
// The disk of a volume source (a PersistentVolume's spec, a pod's spec.volumes[] item): with
// `csi`, spec.csi's driver and volumeHandle; else, or without it, the first in-tree cloud disk
// source (in_tree_volumes.h) and its id. Left empty when there is none. Each field the disk
// needs must be present and not empty.
Status ReadAttachedDisk(const json::Field& source, bool csi, AttachedDisk* out);
// The volumes' node selector operators, as the API server validates them.
void CheckVolumeTerms(const ClusterSnapshot& snapshot, ErrorList* errors);

}  // namespace qrm::cluster::drain
