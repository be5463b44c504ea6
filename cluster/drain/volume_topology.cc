#include "cluster/drain/volume_topology.h"

#include <optional>
#include <string>
#include <string_view>

#include "cluster/drain/node_selection.h"

namespace qrm::cluster::drain {
namespace {

// The labels VolumeZone reads. A volume labelled with a deprecated beta key is also satisfied
// by the node's GA label (the scheduler translates that way only).
constexpr std::string_view kZoneGa = "topology.kubernetes.io/zone";
constexpr std::string_view kRegionGa = "topology.kubernetes.io/region";
constexpr std::string_view kZoneBeta = "failure-domain.beta.kubernetes.io/zone";
constexpr std::string_view kRegionBeta = "failure-domain.beta.kubernetes.io/region";

bool IsTopologyLabel(std::string_view key) {
  return key == kZoneGa || key == kRegionGa || key == kZoneBeta || key == kRegionBeta;
}

std::string_view GaOf(std::string_view key) {
  if (key == kZoneBeta) return kZoneGa;
  if (key == kRegionBeta) return kRegionGa;
  return key;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// A volume's zone label may name several zones, joined by "__" (LabelZonesToSet, which trims
// them). nullopt when an element is empty: the scheduler ignores such a label.
std::optional<bool> InZoneSet(std::string_view set, std::string_view zone) {
  bool found = false;
  while (true) {
    const size_t cut = set.find("__");
    const std::string_view one = Trim(set.substr(0, cut));
    if (one.empty()) return std::nullopt;
    found |= one == zone;
    if (cut == std::string_view::npos) return found;
    set.remove_prefix(cut + 2);
  }
}

// VolumeZone: a node with no zone or region label at all takes any volume (one zone).
bool ZonesAllow(const DrainVolume& volume, const DrainNode& node) {
  bool node_has_topology = false;
  for (const auto& [key, value] : node.labels) node_has_topology |= IsTopologyLabel(key);
  if (!node_has_topology) return true;
  for (const auto& [key, value] : volume.labels) {
    if (!IsTopologyLabel(key)) continue;
    auto have = node.labels.find(key);
    if (have == node.labels.end()) have = node.labels.find(std::string(GaOf(key)));
    if (have == node.labels.end()) return false;
    const std::optional<bool> in = InZoneSet(value, have->second);
    if (in.has_value() && !*in) return false;
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
  if (!snapshot.VolumesKnown()) return VolumeFit::kFits;
  for (const Volume& v : pod.volumes) {
    const std::string claim_name = ClaimNameOf(pod, v);
    if (claim_name.empty()) continue;
    auto claim = snapshot.claims.find(pod.namespace_ + "/" + claim_name);
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
