// PeerCheckedListener: serves a gRPC server on a Unix socket, admitting only peers whose
// credentials (SO_PEERCRED) are on an allowlist.
//
// gRPC's own Unix listener cannot refuse a connection by peer, so this class owns the
// listening socket: it accepts, reads the peer's uid/gid/pid from the kernel, closes the
// connection with a logged reason if the peer is not allowed, and otherwise hands the
// connected descriptor to the server (grpc::AddInsecureChannelFromFd). Used for the sockets
// through which something can change what qrm does: plugin registration and the admin socket,
// and (allowing anyone) for the CRI socket.
//
// Owning the accept loop is also what keeps the socket alive under descriptor exhaustion:
// gRPC 1.51's own listener (iomgr tcp_server_posix.cc, on_read) stops accepting for good on
// any accept4 error but EINTR/EAGAIN, so one EMFILE killed the CRI socket while the process
// lived. Here EMFILE, ENFILE, ENOBUFS and ENOMEM back off (10 ms doubling to 1 s) and retry;
// ECONNABORTED/EPROTO are skipped. Each peer uid may hold at most max_connections_per_peer
// connections at once; excess ones are closed at once and counted in
// qrm_socket_connections_refused_total{socket,reason="per_peer_limit"}. alive() turns false
// when the loop ended on an error it cannot survive or the socket file was removed or replaced
// (checked every second), so /readyz can report it. Refusal lines are rate-limited.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include <sys/types.h>

#include "common/status.h"
#include "common/unix_socket.h"

namespace grpc {
class Server;
}

namespace qrm {

struct PeerAllowlist {
  std::set<uid_t> uids = {0};  // default: root only
  std::set<gid_t> gids;        // peers whose primary gid is listed are allowed too
  bool anyone = false;         // no credential check (the CRI socket: its mode decides)
  // Connections one uid may hold open at once; 0: unlimited.
  int max_connections_per_peer = kDefaultMaxConnectionsPerPeer;
  static constexpr int kDefaultMaxConnectionsPerPeer = 64;
  bool Allows(uid_t uid, gid_t gid) const {
    return anyone || uids.contains(uid) || gids.contains(gid);
  }
};

// Parses "0,1000" / "root,qrm" style lists for flags; errors name `flag`.
StatusOr<std::set<uid_t>> ParseUidList(const std::string& text, const std::string& flag);

// Parses "0,1000" / "qrm,docker" style group lists; "" is the empty list. Errors name `flag`.
StatusOr<std::set<gid_t>> ParseGidList(const std::string& text, const std::string& flag);

class PeerCheckedListener {
 public:
  // Called on the accept thread after each refused connection (e.g. to count it in a metric
  // the owner names); must not block.
  using RefusalHook = std::function<void()>;

  // `component` names the socket in log lines ("registration", "admin").
  PeerCheckedListener(std::string path, PeerAllowlist allow, SocketPermissions perms,
                      std::string component, RefusalHook on_refused = nullptr);
  ~PeerCheckedListener();
  PeerCheckedListener(const PeerCheckedListener&) = delete;
  PeerCheckedListener& operator=(const PeerCheckedListener&) = delete;

  // Prepares the path (stale socket removed; missing directories get perms.dir_mode and
  // group), binds, applies the permissions and starts
  // accepting for `server`, which must be started and must outlive Stop().
  Status Start(grpc::Server* server);
  // Serves `server` on `listen_fd`, a socket its owner already bound at path (with its
  // permissions) and listens on; the listener owns the descriptor from here.
  Status Adopt(grpc::Server* server, int listen_fd);
  void Stop();  // idempotent; removes the socket file if it is still ours

  int refused() const { return refused_.load(); }
  int accepted() const { return accepted_.load(); }
  // False once the socket can no longer be reached (see above).
  bool alive() const { return alive_.load(); }

 private:
  class Loop;
  Status StartLoop();
  void AcceptLoop();

  const std::string path_;
  const PeerAllowlist allow_;
  const SocketPermissions perms_;
  const std::string component_;
  const RefusalHook on_refused_;
  grpc::Server* server_ = nullptr;
  int listen_fd_ = -1;
  int wake_fd_ = -1;      // eventfd that ends the accept loop
  dev_t socket_dev_ = 0;  // the bound socket file, to notice it being removed or replaced
  ino_t socket_ino_ = 0;
  std::thread thread_;
  std::atomic<int> refused_{0};
  std::atomic<int> accepted_{0};
  std::atomic<bool> alive_{false};
};

}  // namespace qrm
