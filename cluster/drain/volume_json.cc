#include "cluster/drain/volume_json.h"

#include <string>
#include <utility>

#include <fmt/format.h>

#include "cluster/drain/in_tree_volumes.h"
#include "cluster/drain/selector_json.h"

namespace qrm::cluster::drain {
namespace {

using json::Field;

// The annotation that named a claim's class before spec.storageClassName; the scheduler still
// reads it first.
constexpr char kBetaStorageClass[] = "volume.beta.kubernetes.io/storage-class";

// object.<key>, which must be present and not empty.
Status ReadRequiredString(const Field& object, const char* key, std::string* out) {
  QRM_RETURN_IF_ERROR(json::ReadString(object, key, out));
  if (out->empty()) return InvalidArgumentError(fmt::format("{}.{}: missing", object.path, key));
  return Status::Ok();
}

}  // namespace

Status ReadAttachedDisk(const Field& source, bool csi, AttachedDisk* out) {
  if (csi) {
    QRM_ASSIGN_OR_RETURN(std::optional<Field> spec, json::Member(source, "csi"));
    if (spec) {
      QRM_RETURN_IF_ERROR(ReadRequiredString(*spec, "driver", &out->driver));
      return ReadRequiredString(*spec, "volumeHandle", &out->handle);
    }
  }
  for (const InTreeDiskSource& s : InTreeDiskSources()) {
    const std::string field(s.field);
    QRM_ASSIGN_OR_RETURN(std::optional<Field> disk, json::Member(source, field.c_str()));
    if (!disk) continue;
    out->driver = std::string(s.plugin);
    out->in_tree = true;
    return ReadRequiredString(*disk, std::string(s.id_field).c_str(), &out->handle);
  }
  return Status::Ok();
}

Status DecodeClaim(const Field& item, ClusterSnapshot* snapshot) {
  QRM_ASSIGN_OR_RETURN(ObjectMeta meta, ReadNamedMeta(item, "PersistentVolumeClaim", "v1"));
  DrainClaim claim{meta.namespace_, meta.name, "", ""};
  const std::string what = "persistentvolumeclaim " + claim.Key();
  QRM_ASSIGN_OR_RETURN(std::optional<Field> spec, json::Member(item, "spec"));
  if (spec) {
    Status s = json::ReadString(*spec, "volumeName", &claim.volume_name);
    if (s.ok()) s = json::ReadString(*spec, "storageClassName", &claim.storage_class);
    if (!s.ok()) return s.WithContext(what);
  }
  if (auto beta = meta.annotations.find(kBetaStorageClass); beta != meta.annotations.end()) {
    claim.storage_class = beta->second;
  }
  snapshot->claims_listed = true;
  if (!snapshot->claims.emplace(claim.Key(), claim).second) {
    return InvalidArgumentError(what + ": listed twice");
  }
  return Status::Ok();
}

Status DecodeVolume(const Field& item, ClusterSnapshot* snapshot) {
  QRM_ASSIGN_OR_RETURN(ObjectMeta meta, ReadNamedMeta(item, "PersistentVolume", "v1"));
  DrainVolume volume{meta.name, std::move(meta.labels), {}, {}};
  const std::string what = "persistentvolume " + volume.name;
  if (Status s = ReadNodeSelectorTerms(
          item, {"spec", "nodeAffinity", "required", "nodeSelectorTerms"}, &volume.node_affinity);
      !s.ok()) {
    return s.WithContext(what);
  }
  QRM_ASSIGN_OR_RETURN(std::optional<Field> spec, json::Member(item, "spec"));
  if (spec) {
    if (Status s = ReadAttachedDisk(*spec, true, &volume.disk); !s.ok()) return s.WithContext(what);
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
