#include "cluster/drain/volume_limits.h"

#include <algorithm>
#include <array>
#include <optional>

#include <fmt/format.h>
#include <openssl/evp.h>

#include "cluster/drain/in_tree_volumes.h"

namespace qrm::cluster::drain {
namespace {

constexpr std::string_view kLimitPrefix = "attachable-volumes-csi-";
constexpr size_t kResourceNameLimit = 63;  // a qualified name's length limit
constexpr size_t kDriverChars = 23;        // what is kept of a long driver name
constexpr size_t kHashHexDigits = 16;      // and of its SHA-1

std::string Sha1Hex(std::string_view text) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  // SHA-1 of a short string cannot fail but for a broken libcrypto; the key is then the
  // digest of nothing, which only loses the limit of that one driver.
  if (EVP_Digest(text.data(), text.size(), digest.data(), &size, EVP_sha1(), nullptr) != 1) {
    size = 0;
  }
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

// Resolves a pod's volumes to CSI drivers and handles as the scheduler does on one node.
class VolumeResolver {
 public:
  VolumeResolver(const ClusterSnapshot& snapshot, bool migration_on)
      : snapshot_(snapshot), migration_on_(migration_on) {}

  void AddPodVolumes(const DrainPod& pod, AttachedVolumes* out) const {
    for (const Volume& v : pod.volumes) {
      if (v.kind == VolumeKind::kInTreeDisk) {
        AddDisk(v.disk, out);
      } else if (const std::string claim = ClaimNameOf(pod, v); !claim.empty()) {
        AddClaim(pod.namespace_, claim, out);
      }
    }
  }

 private:
  // An in-tree plugin's CSI driver when migration is on for the node, else none: the
  // scheduler then counts the volume against no CSI limit.
  std::optional<std::string> MigratedDriver(std::string_view plugin) const {
    std::optional<InTreeDiskSource> source = InTreeSourceOfPlugin(plugin);
    if (!source || !migration_on_) return std::nullopt;
    return std::string(source->csi_driver);
  }

  void AddDisk(const AttachedDisk& disk, AttachedVolumes* out) const {
    if (disk.empty()) return;
    if (!disk.in_tree) {
      Add(disk.driver, disk.handle, out);
    } else if (std::optional<std::string> driver = MigratedDriver(disk.driver)) {
      Add(*driver, disk.handle, out);
    }
  }

  void AddClaim(const std::string& namespace_, const std::string& name,
                AttachedVolumes* out) const {
    if (!snapshot_.VolumesKnown()) return;
    auto claim = snapshot_.claims.find(namespace_ + "/" + name);
    if (claim == snapshot_.claims.end()) return;
    if (!claim->second.volume_name.empty()) {
      auto volume = snapshot_.volumes.find(claim->second.volume_name);
      if (volume != snapshot_.volumes.end()) return AddDisk(volume->second.disk, out);
    }
    // Not bound yet, or bound to a volume that is gone: what its class would provision.
    auto storage_class = snapshot_.storage_classes.find(claim->second.storage_class);
    if (claim->second.storage_class.empty() || storage_class == snapshot_.storage_classes.end()) {
      return;
    }
    const std::string& provisioner = storage_class->second.provisioner;
    std::optional<std::string> driver = provisioner.starts_with("kubernetes.io/")
                                            ? MigratedDriver(provisioner)
                                            : std::optional<std::string>(provisioner);
    if (driver) Add(*driver, "(claim " + claim->first + ")", out);
  }

  static void Add(const std::string& driver, const std::string& handle, AttachedVolumes* out) {
    (*out)[AttachLimitKey(driver)].insert(driver + "/" + handle);
  }

  const ClusterSnapshot& snapshot_;
  bool migration_on_;
};

}  // namespace

std::string AttachLimitKey(std::string_view driver) {
  if (kLimitPrefix.size() + driver.size() < kResourceNameLimit) {
    return fmt::format("{}{}", kLimitPrefix, driver);
  }
  return fmt::format("{}{}{}", kLimitPrefix, driver.substr(0, kDriverChars),
                     Sha1Hex(driver).substr(0, kHashHexDigits));
}

AttachLimits AttachLimitsOf(const ClusterSnapshot& snapshot, const DrainNode& node) {
  AttachLimits out;
  for (const auto& [name, count] : node.allocatable.extended)
    if (name.starts_with(kLimitPrefix)) out[name] = count;
  auto csi_node = snapshot.csi_nodes.find(node.name);
  if (csi_node == snapshot.csi_nodes.end()) return out;
  for (const auto& [driver, count] : csi_node->second.drivers)
    if (count) out[AttachLimitKey(driver)] = *count;
  return out;
}

bool MayAttach(const DrainPod& pod) {
  return std::any_of(pod.volumes.begin(), pod.volumes.end(), [](const Volume& v) {
    return v.kind == VolumeKind::kPersistentVolumeClaim || v.kind == VolumeKind::kEphemeral ||
           v.kind == VolumeKind::kInTreeDisk;
  });
}

bool MigrationOn(const ClusterSnapshot& snapshot, const DrainNode& node) {
  return snapshot.csi_nodes.contains(node.name);
}

AttachedVolumes AttachedVolumesOf(const ClusterSnapshot& snapshot, const DrainPod& pod,
                                  bool migration_on) {
  AttachedVolumes out;
  if (MayAttach(pod)) VolumeResolver(snapshot, migration_on).AddPodVolumes(pod, &out);
  return out;
}

AttachedVolumes AttachedVolumesOf(const ClusterSnapshot& snapshot, const DrainPod& pod,
                                  const DrainNode& node) {
  if (!MayAttach(pod)) return {};
  return AttachedVolumesOf(snapshot, pod, MigrationOn(snapshot, node));
}

bool WithinAttachLimits(const AttachedVolumes& attached, const AttachedVolumes& incoming,
                        const AttachLimits& limits) {
  for (const auto& [key, ids] : incoming) {
    auto limit = limits.find(key);
    if (limit == limits.end()) continue;
    auto have = attached.find(key);
    const int64_t held = have == attached.end() ? 0 : static_cast<int64_t>(have->second.size());
    int64_t added = 0;
    for (const std::string& id : ids)
      if (have == attached.end() || !have->second.contains(id)) ++added;
    if (added > 0 && held + added > limit->second) return false;
  }
  return true;
}

void AddAttached(AttachedVolumes& to, const AttachedVolumes& from) {
  for (const auto& [key, ids] : from) to[key].insert(ids.begin(), ids.end());
}

}  // namespace qrm::cluster::drain
