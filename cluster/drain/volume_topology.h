// The scheduler's volume filters for a pod the drain planner moves: VolumeBinding for claims
// that are bound (the PersistentVolume's required node affinity) and VolumeZone (the volume's
// zone and region labels). A pod on a local PersistentVolume, or on a zonal disk, can only go
// where its data is; CA runs both filters in its simulation. An ephemeral volume's claim
// ("<pod>-<volume>") is checked as a persistentVolumeClaim is.
//
// An unbound claim (spec.volumeName empty) does not constrain the pod: it binds where the pod
// lands (WaitForFirstConsumer). Without PersistentVolumeClaims or without PersistentVolumes in
// the input (ClusterSnapshot::VolumesKnown false) the check is skipped, and the planner logs
// it. A term of spec.nodeAffinity with only matchFields is read as empty and matches no node:
// such a volume's pods are not moved (the safe side).
#pragma once

#include "cluster/drain/snapshot.h"

namespace qrm::cluster::drain {

enum class VolumeFit {
  kFits,
  kClaimMissing,   // a persistentVolumeClaim the pod names does not exist
  kVolumeMissing,  // its claim is bound to a PersistentVolume that does not exist
  kNodeAffinity,   // the volume's spec.nodeAffinity excludes the node
  kZone,           // the volume's zone or region label excludes the node
};

VolumeFit CheckVolumes(const ClusterSnapshot& snapshot, const DrainPod& pod, const DrainNode& node);

}  // namespace qrm::cluster::drain
