// The accept loop of PeerCheckedListener: survives descriptor exhaustion, bounds the
// connections per peer uid, and notices its socket file going away.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include <grpcpp/server_posix.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/errno_text.h"
#include "common/grpc/peer_checked_listener.h"
#include "common/grpc/peer_connections.h"
#include "common/log.h"
#include "common/metrics/metrics.h"
#include "common/rate_limited_log.h"

namespace qrm {
namespace {

using std::chrono::milliseconds;
constexpr milliseconds kFirstBackoff{10};
constexpr milliseconds kMaxBackoff{1000};
constexpr milliseconds kFileCheckPeriod{1000};
constexpr int kMaxAcceptsPerWakeup = 64;  // then poll again, so Stop() is never starved

// Out of descriptors or memory: the pending connection stays queued until some are freed.
bool OutOfResources(int err) {
  return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
}

// The connection went away before we took it, or the kernel refused this one only.
bool OnlyThisConnection(int err) {
  return err == EINTR || err == ECONNABORTED || err == EPROTO || err == EPERM;
}

}  // namespace

class PeerCheckedListener::Loop {
 public:
  explicit Loop(PeerCheckedListener& l)
      : l_(l),
        log_(Logger(l.component_)),
        refusals_(log_, "refused connection lines for " + l.path_),
        errors_(log_, "accept error lines for " + l.path_, 5),
        peers_(l.allow_.max_connections_per_peer),
        over_limit_(metrics::Default().GetCounter(
            "qrm_socket_connections_refused_total",
            "Connections closed at once because their peer already held the most connections "
            "allowed on the socket.",
            {{"socket", l.component_}, {"reason", "per_peer_limit"}})),
        accept_errors_(metrics::Default().GetCounter(
            "qrm_socket_accept_errors_total",
            "accept() failures on a socket that the listener survived by backing off (out of "
            "descriptors or memory).",
            {{"socket", l.component_}})) {}

  void Run() {
    milliseconds backoff{0};
    auto last_check = std::chrono::steady_clock::now();
    for (;;) {
      // While backing off the listening socket is not polled: its queue stays readable.
      pollfd fds[2] = {{backoff.count() > 0 ? -1 : l_.listen_fd_, POLLIN, 0},
                       {l_.wake_fd_, POLLIN, 0}};
      const int timeout =
          static_cast<int>((backoff.count() > 0 ? backoff : kFileCheckPeriod).count());
      const int rc = ::poll(fds, 2, timeout);
      if (rc < 0 && errno != EINTR) return Die("poll", errno);
      if (fds[1].revents != 0) return;
      if (std::chrono::steady_clock::now() - last_check >= kFileCheckPeriod) {
        last_check = std::chrono::steady_clock::now();
        CheckSocketFile();
        peers_.PruneAll();
      }
      if (rc <= 0 && backoff.count() == 0) continue;
      auto next = AcceptReady();
      if (!next.has_value()) return;
      backoff = *next == milliseconds(0) ? *next
                : backoff.count() == 0   ? kFirstBackoff
                                         : std::min(backoff * 2, kMaxBackoff);
    }
  }

 private:
  // Accepts what is queued. Returns 0 when the queue is drained, a positive value when out
  // of resources (back off), nothing when the socket itself failed.
  std::optional<milliseconds> AcceptReady() {
    for (int i = 0; i < kMaxAcceptsPerWakeup; ++i) {
      const int fd = ::accept4(l_.listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd >= 0) {
        Admit(fd);
        continue;
      }
      const int err = errno;
      if (err == EAGAIN || err == EWOULDBLOCK) return milliseconds(0);
      if (OnlyThisConnection(err)) continue;
      if (OutOfResources(err)) {
        accept_errors_.Inc();
        errors_.Log(spdlog::level::warn,
                    "socket={} ({}): accept failed: {}; backing off, pending connections wait",
                    l_.path_, l_.component_, ErrnoText(err));
        return kFirstBackoff;
      }
      Die("accept", err);
      return std::nullopt;
    }
    return milliseconds(0);
  }

  void Admit(int fd) {
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
      refusals_.Log(spdlog::level::warn,
                    "socket={}: refused a connection: cannot read peer credentials: {}", l_.path_,
                    ErrnoText(errno));
      return Refuse(fd);
    }
    if (!l_.allow_.Allows(cred.uid, cred.gid)) {
      refusals_.Log(spdlog::level::warn,
                    "socket={} ({}): refused a connection from pid {} uid {} gid {}: neither the "
                    "uid nor the gid is on the allowlist",
                    l_.path_, l_.component_, cred.pid, cred.uid, cred.gid);
      return Refuse(fd);
    }
    if (!peers_.TryAdd(cred.uid, fd)) {
      over_limit_.Inc();
      refusals_.Log(spdlog::level::warn,
                    "socket={} ({}): closed a connection from pid {} uid {}: the uid already "
                    "holds {} connections (the most allowed per peer)",
                    l_.path_, l_.component_, cred.pid, cred.uid,
                    l_.allow_.max_connections_per_peer);
      ::close(fd);
      return;
    }
    ++l_.accepted_;
    // gRPC owns fd from here; its endpoints need a non-blocking descriptor.
    grpc::AddInsecureChannelFromFd(l_.server_, fd);
  }

  void Refuse(int fd) {
    ::close(fd);
    ++l_.refused_;
    if (l_.on_refused_) l_.on_refused_();
  }

  // A socket file removed or replaced leaves the listener unreachable: say so once.
  void CheckSocketFile() {
    if (!l_.alive_.load()) return;
    struct stat st {};
    if (::lstat(l_.path_.c_str(), &st) == 0 && st.st_dev == l_.socket_dev_ &&
        st.st_ino == l_.socket_ino_) {
      return;
    }
    l_.alive_ = false;
    log_->error(
        "socket={} ({}): the socket file was removed or replaced; nobody can connect "
        "any more (restart the process to serve it again)",
        l_.path_, l_.component_);
  }

  void Die(const char* what, int err) {
    l_.alive_ = false;
    log_->error("socket={} ({}): {} failed: {}; the socket is no longer served", l_.path_,
                l_.component_, what, ErrnoText(err));
  }

  PeerCheckedListener& l_;
  std::shared_ptr<spdlog::logger> log_;
  RateLimitedLog refusals_;
  RateLimitedLog errors_;
  PeerConnections peers_;
  metrics::Counter& over_limit_;
  metrics::Counter& accept_errors_;
};

void PeerCheckedListener::AcceptLoop() {
  Loop(*this).Run();
}

}  // namespace qrm
