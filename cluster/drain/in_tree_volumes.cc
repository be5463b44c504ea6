#include "cluster/drain/in_tree_volumes.h"

#include <array>

namespace qrm::cluster::drain {
namespace {

// csi-translation-lib's plugins: the in-tree name and the CSI driver name of each.
constexpr std::array<InTreeDiskSource, 4> kSources{{
    {"awsElasticBlockStore", "volumeID", "kubernetes.io/aws-ebs", "ebs.csi.aws.com"},
    {"gcePersistentDisk", "pdName", "kubernetes.io/gce-pd", "pd.csi.storage.gke.io"},
    {"azureDisk", "diskURI", "kubernetes.io/azure-disk", "disk.csi.azure.com"},
    {"cinder", "volumeID", "kubernetes.io/cinder", "cinder.csi.openstack.org"},
}};

}  // namespace

std::span<const InTreeDiskSource> InTreeDiskSources() {
  return kSources;
}

std::optional<InTreeDiskSource> InTreeSourceOfPlugin(std::string_view plugin) {
  for (const InTreeDiskSource& s : kSources)
    if (s.plugin == plugin) return s;
  return std::nullopt;
}

}  // namespace qrm::cluster::drain
