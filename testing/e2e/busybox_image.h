// A container image built locally from the host's busybox-static, as an OCI image layout
// tarball that `ctr images import` loads. There is no registry access on the test machines.
#pragma once

#include <string>

#include "common/status.h"

namespace qrm::e2e {

// The name every e2e containerd imports the image under; also its sandbox (pause) image.
inline constexpr char kBusyboxImage[] = "docker.io/qrm-e2e/busybox:latest";

struct BusyboxImage {
  std::string name;             // e.g. kBusyboxImage
  std::string tar_path;         // the OCI layout tarball
  std::string index_digest;     // "sha256:..." of index.json (the imported image's target)
  std::string manifest_digest;  // "sha256:..."
  std::string config_digest;    // "sha256:...", the image id CRI reports
};

// Builds, under `dir`, an OCI image layout tarball (oci-layout, index.json, blobs/sha256/...)
// whose single uncompressed layer holds /bin/busybox (from the host's busybox-static), one
// symlink per applet it lists, /etc/passwd, /etc/group and empty /tmp, /root. Its config runs
// `/bin/sleep 2147483647`, so it serves as the sandbox (pause) image too. The layer is built
// with tar(1) and is reproducible; digests are computed here.
StatusOr<BusyboxImage> BuildBusyboxImage(const std::string& dir, const std::string& name);

// The host's static busybox ("/bin/busybox"), or empty if absent.
std::string HostBusybox();

}  // namespace qrm::e2e
