// PluginRegistry: which resource plugins this host knows and how to reach them.
//
// Plugins arrive two ways, both ending in AcceptRegistration():
//  * Register RPC (device-plugin style) on <plugin_dir>/<registration_socket>;
//  * directory watching (plugin-watcher style): a socket appearing in the
//    plugin directory is asked GetInfo and, if it is a v1alpha1 resource
//    plugin, registered and told so with NotifyRegistrationStatus.
// AcceptRegistration() validates the version, the resource name (Kubernetes' container resource
// name rules) and the endpoint (a plain socket name confined to the plugin directory), dials back
// and reads GetResourcePluginOptions. A Register RPC's own options win, as in the kubewharf
// kubelet (a difference is logged once); directory-watched plugins send none, so theirs come
// from GetResourcePluginOptions. A plugin refused during directory watching gets one warning
// line naming its socket and the reason. A new registration for a resource replaces the old
// endpoint, unless the old one is alive on another socket (a second plugin claiming
// the resource is refused with kAlreadyExists).
// The registration socket admits only peers on the allowlist (SO_PEERCRED,
// common/grpc/peer_checked_listener.h); refusals are logged and counted in
// qrm_socket_peer_refused_total{socket="registration"}. Plugin channels and the
// registration server cap message sizes at max_message_bytes. A socket that disappears stops its
// endpoint (plugin_endpoint.h). At Start, live plugin sockets are discovered; the registry never
// deletes a plugin's socket (one nobody listens on may be mid-start).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/thread_pool.hpp>

#include "common/grpc/peer_checked_listener.h"
#include "common/mutex.h"
#include "common/protocol_keys.h"
#include "common/rate_limited_log.h"
#include "qrm/registry/machine_limits.h"
#include "qrm/registry/plugin_endpoint.h"

namespace grpc {
class Server;
}

namespace qrm::registry {

struct RegistryOptions {
  std::string plugin_dir = "/var/lib/qrm/plugins";
  std::string registration_socket = "qrm.sock";
  // Deadline for dialing back (GetResourcePluginOptions, GetInfo).
  std::chrono::milliseconds dial_timeout{10000};
  // How long a stopped plugin's capacity still counts.
  std::chrono::seconds grace_period{300};
  // Who may connect to the registration socket (root only by default), its mode and group,
  // and the mode of the plugin directory when the registry creates it.
  PeerAllowlist allow;
  SocketPermissions socket_permissions;
  // Largest message accepted from a plugin (its answers) or a registering client.
  int max_message_bytes = 16 << 20;
  // When set, plugin answers may only name CPUs and NUMA nodes online in this sysfs
  // (machine_limits.h); empty: ids are checked for syntax only (tests with fake topologies).
  std::string machine_sysfs_root;
  // Accompanying resources: requests for the key are placed by the plugin of the value, and
  // only that plugin sees their quantities (plugin_endpoint.h). The default matches the NIC
  // plugin's default names.
  std::map<std::string, std::string> accompanying_resources = {
      {kNicBandwidthResourceName, kNicResourceName}};
  // Register calls checked at once (each may wait dial_timeout for its plugin); more are
  // refused with RESOURCE_EXHAUSTED (bounded_registration.h).
  int max_concurrent_registrations = 4;
};

class PluginRegistry {
 public:
  // Watches run on `io`; blocking dial-backs run on `workers`.
  PluginRegistry(RegistryOptions options, boost::asio::io_context& io,
                 boost::asio::thread_pool& workers);
  ~PluginRegistry();
  PluginRegistry(const PluginRegistry&) = delete;
  PluginRegistry& operator=(const PluginRegistry&) = delete;

  Status Start();
  void Stop();

  // Validates, dials back and records a plugin. Returns the refusal reason.
  Status AcceptRegistration(const ::resourceplugin::v1alpha1::RegisterRequest& request,
                            RegistrationStyle style);

  // Called by AcceptRegistration for every accepted registration, after the dial-back and before
  // the endpoint is published, so admission reaches the plugin only once it returns: the host
  // replays there what a restarted plugin lost (Reconciler::OnPluginRegistered). Set it
  // before Start.
  using RegistrationHook = std::function<void(const std::shared_ptr<PluginEndpoint>&)>;
  void SetRegistrationHook(RegistrationHook hook) { hook_ = std::move(hook); }

  std::shared_ptr<PluginEndpoint> Find(const std::string& resource) const;
  std::vector<std::shared_ptr<PluginEndpoint>> Endpoints() const;
  // Endpoints whose capacity counts: live ones and those stopped for less than
  // the grace period.
  std::vector<std::shared_ptr<PluginEndpoint>> EndpointsWithCapacity() const;

  const RegistryOptions& options() const { return options_; }
  // Whether the registration socket is served and reachable, for /readyz.
  bool listening() const { return listener_ && listener_->alive(); }
  std::string registration_socket_path() const;

 private:
  class RegistrationService;
  // The socket path a registration names, once its version, resource name and endpoint pass.
  StatusOr<std::string> CheckRequest(
      const ::resourceplugin::v1alpha1::RegisterRequest& request) const;
  void DiscoverExistingSockets();
  void ArmWatch();
  void OnDirectoryEvents(size_t bytes);
  void Discover(const std::string& socket_name);
  void OnSocketRemoved(const std::string& socket_name);
  std::set<std::string> AccompanyingOf(const std::string& resource) const;

  const RegistryOptions options_;
  boost::asio::io_context& io_;
  boost::asio::thread_pool& workers_;
  std::unique_ptr<RegistrationService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<PeerCheckedListener> listener_;
  std::unique_ptr<RateLimitedLog> refusals_;
  MachineLimits limits_;
  RegistrationHook hook_;
  std::unique_ptr<boost::asio::posix::stream_descriptor> watch_;
  alignas(8) char watch_buf_[4096] = {};

  mutable Mutex mu_;
  std::map<std::string, std::shared_ptr<PluginEndpoint>> endpoints_
      QRM_GUARDED_BY(mu_);  // by resource
};

}  // namespace qrm::registry
