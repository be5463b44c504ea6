#include "cluster/drain/volume_json.h"

#include <string>
#include <utility>

#include <fmt/format.h>

#include "cluster/drain/selector_json.h"

namespace qrm::cluster::drain {
namespace {

using json::Field;

StatusOr<ObjectMeta> ReadNamedMeta(const Field& item, std::string_view kind) {
  QRM_ASSIGN_OR_RETURN(ObjectMeta meta, json::ReadTypeAndObjectMeta(item, kind, "v1"));
  if (meta.name.empty()) return InvalidArgumentError("metadata.name: missing");
  return meta;
}

}  // namespace

Status DecodeClaim(const Field& item, ClusterSnapshot* snapshot) {
  QRM_ASSIGN_OR_RETURN(ObjectMeta meta, ReadNamedMeta(item, "PersistentVolumeClaim"));
  DrainClaim claim{meta.namespace_, meta.name, ""};
  const std::string what = "persistentvolumeclaim " + claim.Key();
  QRM_ASSIGN_OR_RETURN(std::optional<Field> spec, json::Member(item, "spec"));
  if (spec) {
    Status s = json::ReadString(*spec, "volumeName", &claim.volume_name);
    if (!s.ok()) return s.WithContext(what);
  }
  snapshot->claims_listed = true;
  if (!snapshot->claims.emplace(claim.Key(), claim).second) {
    return InvalidArgumentError(what + ": listed twice");
  }
  return Status::Ok();
}

Status DecodeVolume(const Field& item, ClusterSnapshot* snapshot) {
  QRM_ASSIGN_OR_RETURN(ObjectMeta meta, ReadNamedMeta(item, "PersistentVolume"));
  DrainVolume volume{meta.name, std::move(meta.labels), {}};
  const std::string what = "persistentvolume " + volume.name;
  if (Status s = ReadNodeSelectorTerms(
          item, {"spec", "nodeAffinity", "required", "nodeSelectorTerms"}, &volume.node_affinity);
      !s.ok()) {
    return s.WithContext(what);
  }
  snapshot->volumes_listed = true;
  if (!snapshot->volumes.emplace(volume.name, volume).second) {
    return InvalidArgumentError(what + ": listed twice");
  }
  return Status::Ok();
}

void CheckVolumeTerms(const ClusterSnapshot& snapshot, ErrorList* errors) {
  for (const auto& [name, volume] : snapshot.volumes) {
    for (size_t t = 0; t < volume.node_affinity.size(); ++t) {
      CheckRequirements(
          volume.node_affinity[t].match_expressions, true,
          fmt::format("spec.nodeAffinity.required.nodeSelectorTerms[{}].matchExpressions", t),
          errors, "persistentvolume " + name);
    }
  }
}

}  // namespace qrm::cluster::drain
