// PluginServer: serves a ResourcePlugin on a Unix socket and keeps it
// registered with the qrm host.
//
// It registers in both styles the host understands:
//  * device-plugin style: it calls Registration.Register on the host's socket
//    (<plugin_dir>/qrm.sock), and again whenever that socket is re-created
//    (the host restarted), watching the directory with inotify;
//  * plugin-watcher style: the same socket also serves
//    pluginregistration.Registration (GetInfo / NotifyRegistrationStatus), so a
//    host that watches the directory discovers the plugin by itself.
// A stale socket left by a crashed run is replaced at start; the socket is
// removed on Stop. While running, the socket path is checked on every directory event and
// every 2 s: if it was removed, or replaced by anything else (a symlink, a FIFO, another
// file), the plugin stops serving (nobody can reach it there), reports not ready, logs why
// (once a minute while blocked), and serves again as soon as the path is free (or holds only
// a stale socket). It never deletes a file that is not a socket.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "common/status.h"
#include "plugins/sdk/resource_plugin.h"

namespace qrm::sdk {

inline constexpr const char* kDefaultPluginDir = "/var/lib/qrm/plugins";
inline constexpr const char* kDefaultRegistrationSocket = "qrm.sock";
inline constexpr const char* kVersion = "v1alpha1";
inline constexpr const char* kWatcherPluginType = "ResourcePlugin";

struct PluginServerOptions {
  std::string plugin_dir = kDefaultPluginDir;
  // Socket file name inside plugin_dir; empty means "<resource name>.sock" with
  // every character outside [A-Za-z0-9._-] replaced by '_'.
  std::string socket_name;
  std::string registration_socket = kDefaultRegistrationSocket;
  // Call Registration.Register on the host (device-plugin style). Watcher-style
  // discovery through GetInfo is always served.
  bool register_with_host = true;
  // How long one Register attempt may wait for the host to answer.
  std::chrono::milliseconds register_timeout{10000};
  // "IP:PORT" for /metrics, /healthz and /readyz (ready once registered with the host), served
  // by Run; empty disables them.
  std::string metrics_address;
};

// Default socket file name for a resource: "example.com/accel" -> "example.com_accel.sock".
std::string DefaultSocketName(const std::string& resource_name);

class PluginServer {
 public:
  PluginServer(ResourcePlugin& plugin, PluginServerOptions options);
  ~PluginServer();
  PluginServer(const PluginServer&) = delete;
  PluginServer& operator=(const PluginServer&) = delete;

  // Starts serving and (asynchronously) registering. Fails if the socket
  // cannot be created (e.g. a non-socket file is in the way).
  Status Start();
  // Stops serving and removes the socket. Idempotent.
  void Stop();

  std::string socket_path() const;
  // Successful Register calls so far (device-plugin style).
  int registrations() const;
  // Whether the socket is served right now (false while its path is taken by another file).
  bool serving() const;
  // Whether the host last told us (NotifyRegistrationStatus) we are registered.
  bool watcher_registered() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace qrm::sdk
