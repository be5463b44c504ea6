// AdminServer: qrm's admin service (api/admin_v1.proto) for qrmctl, on a local Unix socket
// that only allowed peers (SO_PEERCRED; root by default) may connect to.
#pragma once

#include <memory>
#include <string>

#include "common/grpc/peer_checked_listener.h"
#include "common/status.h"
#include "qrm/host/host.h"

namespace grpc {
class Server;
}

namespace qrm::admin {

struct AdminOptions {
  std::string socket = "/var/run/qrm/admin.sock";
  PeerAllowlist allow;  // root only unless configured
  // Refusals are counted in qrm_socket_peer_refused_total{socket="admin"}.
  SocketPermissions permissions;  // 0600 in a 0700 directory unless a group is configured
};

class AdminServer {
 public:
  AdminServer(AdminOptions options, host::Host& host);
  ~AdminServer();
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  Status Start();
  void Stop();  // idempotent
  // Whether the admin socket is served and reachable, for /readyz.
  bool listening() const { return listener_ && listener_->alive(); }

 private:
  class Service;
  AdminOptions options_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<PeerCheckedListener> listener_;
};

}  // namespace qrm::admin
