// Reading the storage.k8s.io/v1 objects of the drain planner's input: StorageClasses (what
// provisions an unbound claim) and CSINodes (how many volumes each CSI driver can attach to a
// node), for the volume attach limits (volume_limits.h).
#pragma once

#include "cluster/drain/snapshot.h"
#include "cluster/objects/json_io.h"
#include "common/status.h"

namespace qrm::cluster::drain {

// A StorageClass: its name, provisioner (required), volumeBindingMode (Immediate when absent,
// as the API server defaults it) and allowedTopologies.
Status DecodeStorageClass(const json::Field& item, ClusterSnapshot* snapshot);
// A CSINode: its name (its node's) and each spec.drivers[] entry's name and allocatable.count
// (a count is an integer, not negative).
Status DecodeCsiNode(const json::Field& item, ClusterSnapshot* snapshot);

}  // namespace qrm::cluster::drain
