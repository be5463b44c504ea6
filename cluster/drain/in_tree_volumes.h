// The in-tree cloud disks whose attachments the scheduler counts against a CSI driver's limit:
// CSI migration of these four plugins is always on, so NodeVolumeLimits translates them to the
// CSI driver that replaced them (on a node with a CSINode: without one it counts none of them).
// Portworx and RBD migrate only behind feature gates and the CSINode annotation that lists
// migrated plugins; vSphere and Azure File volumes are not counted at all (kube-scheduler
// 1.29-1.31), so none of them is here.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace qrm::cluster::drain {

struct InTreeDiskSource {
  std::string_view field;       // the volume source's field in a pod's or a PV's spec
  std::string_view id_field;    // the field naming the disk in it
  std::string_view plugin;      // the in-tree plugin, as a StorageClass provisioner names it
  std::string_view csi_driver;  // the CSI driver it migrates to
};

std::span<const InTreeDiskSource> InTreeDiskSources();
// The source for an in-tree plugin name ("kubernetes.io/aws-ebs"), or nullopt.
std::optional<InTreeDiskSource> InTreeSourceOfPlugin(std::string_view plugin);

}  // namespace qrm::cluster::drain
