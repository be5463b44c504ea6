// Containerd: a private containerd (Debian 12's 1.6) + runc for one e2e test.
//
// Everything lives under one TempDir: config.toml, root, state, the gRPC and ttrpc sockets,
// runc's state, CNI dirs, pod logs and containerd's log. containerd runs under
// qrm-e2e-nsinit, which gives it a private mount namespace with its own tmpfs on /run (the
// 1.6 shims put their sockets in /run/containerd/s regardless of the config), reaps its shims
// and kills whatever is left once containerd exits. Nothing touches /run/containerd, a system
// containerd, /etc/cni or /opt. Pods made through Client() get cgroup parents under a
// cgroup unique to this instance (cgroup_root()), removed at the end.
//
//   StatusOr<std::unique_ptr<Containerd>> c = Containerd::Start();
//   REQUIRE(c.ok());
//   CriClient cri = (*c)->Client();
//
// Destruction (or Stop()) stops and removes every container and pod sandbox containerd
// lists, stops containerd, and checks that no shim, container, cgroup or mount is left.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <sys/types.h>

#include "common/status.h"
#include "testing/e2e/cri_client.h"
#include "testing/subprocess.h"

namespace qrm::testing {
class ChildProcess;
class TempDir;
}  // namespace qrm::testing

namespace qrm::e2e {

struct ContainerdOptions {
  // "overlayfs", "native", or empty: overlayfs if an overlay mount works here, else native.
  // The environment variable QRM_E2E_SNAPSHOTTER overrides an empty value.
  std::string snapshotter;
  // Build the busybox image and import it as kBusyboxImage (also the sandbox image).
  bool import_busybox = true;
  // How long to wait for containerd's CRI Version RPC to answer.
  std::chrono::milliseconds start_timeout{std::chrono::seconds(30)};
};

class Containerd {
 public:
  static StatusOr<std::unique_ptr<Containerd>> Start(ContainerdOptions options = {});
  ~Containerd();
  Containerd(const Containerd&) = delete;
  Containerd& operator=(const Containerd&) = delete;

  const std::string& dir() const { return dir_path_; }
  const std::string& socket() const { return socket_; }  // CRI + containerd API
  const std::string& snapshotter() const { return snapshotter_; }
  const std::string& cgroup_root() const { return cgroup_root_; }  // "/qrm-e2e-XXXXXX"
  const std::string& image() const { return image_; }              // kBusyboxImage
  const std::string& config_path() const { return config_path_; }
  pid_t nsinit_pid() const;
  bool running() const;

  // containerd's log (stdout+stderr), whole or its last `bytes`.
  std::string Log() const;
  std::string LogTail(size_t bytes = 8192) const;

  // A CRI client on socket(), defaulting to image(), with pod cgroups under cgroup_root()
  // and pod logs under dir().
  CriClient::Options ClientOptions() const;
  CriClient Client() const;

  // Runs `ctr -a socket() -n k8s.io ARGS...`.
  qrm::testing::ProcessResult Ctr(const std::vector<std::string>& args) const;
  // Imports an image tarball under `name`, unpacked for snapshotter(), and waits until the
  // CRI image service lists it.
  Status ImportImage(const std::string& tar_path, const std::string& name);

  // Removes every container and pod sandbox, stops containerd, kills leftovers, removes the
  // instance's cgroups and any mount under dir(). Idempotent. Returns what had to be forced
  // or could not be cleaned (empty when everything went away by itself).
  std::vector<std::string> Stop();

 private:
  Containerd() = default;
  Status Launch(const ContainerdOptions& options);
  Status WaitUntilServing(std::chrono::milliseconds timeout);
  Status CheckSnapshotter();

  std::unique_ptr<qrm::testing::TempDir> dir_;
  std::unique_ptr<qrm::testing::ChildProcess> process_;
  std::string dir_path_;
  std::string socket_;
  std::string config_path_;
  std::string log_path_;
  std::string snapshotter_;
  std::string cgroup_root_;
  std::string image_;
  bool stopped_ = false;
};

// The config.toml Containerd writes (exposed for the README and for debugging).
std::string ContainerdConfig(const std::string& dir, const std::string& snapshotter,
                             const std::string& sandbox_image);

}  // namespace qrm::e2e
