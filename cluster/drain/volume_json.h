// Reading the PersistentVolumeClaims and PersistentVolumes of the drain planner's input: what
// the volume topology check (volume_topology.h) uses of them.
#pragma once

#include "cluster/drain/error_list.h"
#include "cluster/drain/snapshot.h"
#include "cluster/objects/json_io.h"
#include "common/status.h"

namespace qrm::cluster::drain {

// A PersistentVolumeClaim (v1): its namespace, name and spec.volumeName.
Status DecodeClaim(const json::Field& item, ClusterSnapshot* snapshot);
// A PersistentVolume (v1): its name, labels and spec.nodeAffinity.required.nodeSelectorTerms.
Status DecodeVolume(const json::Field& item, ClusterSnapshot* snapshot);
// The volumes' node selector operators, as the API server validates them.
void CheckVolumeTerms(const ClusterSnapshot& snapshot, ErrorList* errors);

}  // namespace qrm::cluster::drain
