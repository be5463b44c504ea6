#include "testing/e2e/busybox_image.h"

#include <filesystem>
#include <sstream>
#include <vector>

#include <sys/utsname.h>
#include <unistd.h>

#include "testing/e2e/sha256.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"

namespace qrm::e2e {
namespace fs = std::filesystem;
namespace {

std::string OciArchitecture() {
  utsname u{};
  ::uname(&u);
  const std::string machine = u.machine;
  if (machine == "x86_64") return "amd64";
  if (machine == "aarch64") return "arm64";
  if (machine == "armv7l") return "arm";
  return machine;
}

// Stores `content` as a blob; returns its descriptor fields.
struct Blob {
  std::string digest;
  size_t size = 0;
};

StatusOr<Blob> WriteBlob(const std::string& layout, const std::string& content) {
  Blob blob{"sha256:" + Sha256Hex(content), content.size()};
  try {
    qrm::testing::WriteFile(layout + "/blobs/sha256/" + blob.digest.substr(7), content);
  } catch (const std::exception& e) {
    return InternalError(e.what());
  }
  return blob;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

Status RunTool(const std::vector<std::string>& argv) {
  const qrm::testing::ProcessResult r = qrm::testing::RunProcess(argv);
  if (r.exit_code == 0) return Status::Ok();
  std::string cmd;
  for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  return InternalError(cmd + " exited with " + std::to_string(r.exit_code) + ": " + r.output);
}

}  // namespace

std::string HostBusybox() {
  for (const char* p : {"/bin/busybox", "/usr/bin/busybox"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return {};
}

StatusOr<BusyboxImage> BuildBusyboxImage(const std::string& dir, const std::string& name) {
  const std::string busybox = HostBusybox();
  if (busybox.empty()) return NotFoundError("no /bin/busybox (install busybox-static)");
  const qrm::testing::ProcessResult list = qrm::testing::RunProcess({busybox, "--list"});
  if (list.exit_code != 0) return InternalError("busybox --list failed: " + list.output);

  // 1. The root filesystem, staged on disk, then tarred into the single layer.
  const std::string rootfs = dir + "/busybox-rootfs";
  const std::string layout = dir + "/busybox-oci";
  std::error_code ec;
  fs::remove_all(rootfs, ec);
  fs::remove_all(layout, ec);
  for (const char* sub : {"bin", "etc", "tmp", "root", "proc", "sys", "dev"}) {
    fs::create_directories(rootfs + "/" + sub, ec);
    if (ec) return InternalError("mkdir " + rootfs + "/" + sub + ": " + ec.message());
  }
  fs::permissions(rootfs + "/tmp", fs::perms::all | fs::perms::sticky_bit, ec);
  fs::copy_file(busybox, rootfs + "/bin/busybox", ec);
  if (ec) return InternalError("copy " + busybox + ": " + ec.message());
  std::istringstream applets(list.output);
  std::string applet;
  while (applets >> applet) {
    if (applet == "busybox" || applet.find('/') != std::string::npos) continue;
    fs::create_symlink("busybox", rootfs + "/bin/" + applet, ec);
    if (ec) return InternalError("symlink " + applet + ": " + ec.message());
  }
  try {
    qrm::testing::WriteFile(rootfs + "/etc/passwd", "root:x:0:0:root:/root:/bin/sh\n");
    qrm::testing::WriteFile(rootfs + "/etc/group", "root:x:0:\n");
  } catch (const std::exception& e) {
    return InternalError(e.what());
  }
  const std::string layer_tar = dir + "/busybox-layer.tar";
  QRM_RETURN_IF_ERROR(RunTool({"tar", "--create", "--file", layer_tar, "--directory", rootfs,
                               "--numeric-owner", "--owner=0", "--group=0", "--mtime=@0",
                               "--sort=name", "bin", "etc", "tmp", "root", "proc", "sys", "dev"}));
  fs::remove_all(rootfs, ec);

  // 2. The OCI layout: layer blob, config, manifest, index.
  fs::create_directories(layout + "/blobs/sha256", ec);
  if (ec) return InternalError("mkdir " + layout + ": " + ec.message());
  StatusOr<std::string> layer_hex = Sha256FileHex(layer_tar);
  if (!layer_hex.ok()) return layer_hex.status();
  const std::string layer_digest = "sha256:" + *layer_hex;
  const auto layer_size = fs::file_size(layer_tar, ec);
  if (ec) return InternalError("stat " + layer_tar + ": " + ec.message());
  fs::rename(layer_tar, layout + "/blobs/sha256/" + *layer_hex, ec);
  if (ec) return InternalError("move layer: " + ec.message());

  const std::string arch = OciArchitecture();
  const std::string config = R"({"architecture":)" + JsonString(arch) +
                             R"(,"os":"linux","config":{"Env":["PATH=/bin"],)"
                             R"("Cmd":["/bin/sleep","2147483647"],"WorkingDir":"/"},)"
                             R"("rootfs":{"type":"layers","diff_ids":[")" +
                             layer_digest + R"("]}})";
  StatusOr<Blob> config_blob = WriteBlob(layout, config);
  if (!config_blob.ok()) return config_blob.status();

  const std::string manifest =
      R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",)"
      R"("config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":")" +
      config_blob->digest + R"(","size":)" + std::to_string(config_blob->size) +
      R"(},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":")" +
      layer_digest + R"(","size":)" + std::to_string(layer_size) + "}]}";
  StatusOr<Blob> manifest_blob = WriteBlob(layout, manifest);
  if (!manifest_blob.ok()) return manifest_blob.status();

  const std::string index =
      R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json",)"
      R"("manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":")" +
      manifest_blob->digest + R"(","size":)" + std::to_string(manifest_blob->size) +
      R"(,"platform":{"architecture":)" + JsonString(arch) + R"(,"os":"linux"}}]})";
  try {
    qrm::testing::WriteFile(layout + "/index.json", index);
    qrm::testing::WriteFile(layout + "/oci-layout", R"({"imageLayoutVersion":"1.0.0"})");
  } catch (const std::exception& e) {
    return InternalError(e.what());
  }

  BusyboxImage image;
  image.name = name;
  image.tar_path = dir + "/busybox-oci.tar";
  image.index_digest = "sha256:" + Sha256Hex(index);
  image.manifest_digest = manifest_blob->digest;
  image.config_digest = config_blob->digest;
  QRM_RETURN_IF_ERROR(
      RunTool({"tar", "--create", "--file", image.tar_path, "--directory", layout,
               "--numeric-owner", "--owner=0", "--group=0", "oci-layout", "index.json", "blobs"}));
  fs::remove_all(layout, ec);
  return image;
}

}  // namespace qrm::e2e
