#include "cluster/drain/volume_topology.h"

#include <string_view>

#include "cluster/drain/node_selection.h"

namespace qrm::cluster::drain {
namespace {

// The labels VolumeZone reads, each with its other spelling (GA and the deprecated beta one):
// a volume labelled with one is satisfied by a node labelled with either.
struct TopologyLabel {
  std::string_view key;
  std::string_view other;
};
constexpr TopologyLabel kTopologyLabels[] = {
    {"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"},
    {"topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region"},
    {"failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone"},
    {"failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region"},
};

const std::string* NodeValue(const DrainNode& node, const TopologyLabel& label) {
  for (std::string_view key : {label.key, label.other}) {
    auto it = node.labels.find(std::string(key));
    if (it != node.labels.end()) return &it->second;
  }
  return nullptr;
}

// A volume's zone label may name several zones, joined by "__" (LabelZonesToSet).
bool InZoneSet(std::string_view set, std::string_view zone) {
  while (true) {
    const size_t cut = set.find("__");
    if (set.substr(0, cut) == zone) return true;
    if (cut == std::string_view::npos) return false;
    set.remove_prefix(cut + 2);
  }
}

bool ZonesAllow(const DrainVolume& volume, const DrainNode& node) {
  for (const TopologyLabel& label : kTopologyLabels) {
    auto wanted = volume.labels.find(std::string(label.key));
    if (wanted == volume.labels.end()) continue;
    const std::string* have = NodeValue(node, label);
    if (have == nullptr || !InZoneSet(wanted->second, *have)) return false;
  }
  return true;
}

bool AffinityAllows(const DrainVolume& volume, const DrainNode& node) {
  if (volume.node_affinity.empty()) return true;
  for (const NodeSelectorTerm& term : volume.node_affinity)
    if (TermMatches(term, node.labels)) return true;
  return false;
}

}  // namespace

VolumeFit CheckVolumes(const ClusterSnapshot& snapshot, const DrainPod& pod,
                       const DrainNode& node) {
  if (!snapshot.volumes_listed) return VolumeFit::kFits;
  for (const Volume& v : pod.volumes) {
    if (v.kind != VolumeKind::kPersistentVolumeClaim) continue;
    auto claim = snapshot.claims.find(pod.namespace_ + "/" + v.claim);
    if (claim == snapshot.claims.end()) return VolumeFit::kClaimMissing;
    if (claim->second.volume_name.empty()) continue;  // binds where the pod lands
    auto volume = snapshot.volumes.find(claim->second.volume_name);
    if (volume == snapshot.volumes.end()) return VolumeFit::kVolumeMissing;
    if (!AffinityAllows(volume->second, node)) return VolumeFit::kNodeAffinity;
    if (!ZonesAllow(volume->second, node)) return VolumeFit::kZone;
  }
  return VolumeFit::kFits;
}

}  // namespace qrm::cluster::drain
