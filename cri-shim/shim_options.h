// ShimOptions: how the CRI shim is configured (qrm-host's flags map onto these).
#pragma once

#include <chrono>
#include <optional>
#include <set>
#include <string>

#include <sys/types.h>

namespace qrm::shim {

struct ShimOptions {
  // The socket the kubelet talks to (--container-runtime-endpoint of the kubelet), as a
  // path or unix:// URL. A stale socket there is removed at Serve.
  std::string cri_socket = "unix:///var/run/qrm/cri.sock";
  // Where the real runtime serves CRI.
  std::string runtime_endpoint = "unix:///run/containerd/containerd.sock";
  // Where image calls go; empty means runtime_endpoint.
  std::string image_endpoint;
  // Message size limit, both directions, on both sides (the kubelet's own limit is 16 MiB).
  int max_message_bytes = 16 * 1024 * 1024;
  // Pods in these namespaces pass through untouched (like pods annotated qrm.io/skip).
  std::set<std::string> skip_namespaces;
  // The CRI socket's mode and group; unset means "as the runtime socket has them" (its
  // owner is always copied).
  std::optional<mode_t> socket_mode;
  std::optional<std::string> socket_group;  // group name or numeric gid
  // Connections one peer uid may hold on the CRI socket at once (more are closed at once);
  // 0: unlimited. Keeps a client from using up the process's descriptors.
  int max_connections_per_peer = 64;
  // Threads for intercepted calls (admission, rollback, release); bounds how many pods the
  // shim works on at once.
  size_t admission_threads = 8;
  // Deadline of the shim's own runtime calls (resync lists, reconcile updates) and of the
  // connection check.
  std::chrono::milliseconds runtime_timeout{10000};
  // Deadline of PreStartContainer on a plugin (the reference implementation's 30 s).
  std::chrono::milliseconds pre_start_timeout{30000};
  // How long Stop waits for in-flight calls before cancelling them.
  std::chrono::milliseconds shutdown_grace{5000};
};

}  // namespace qrm::shim
