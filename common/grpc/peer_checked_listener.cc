#include "common/grpc/peer_checked_listener.h"

#include <cerrno>
#include <charconv>
#include <cstring>

#include <fmt/format.h>
#include <grpcpp/server.h>
#include <grpcpp/server_posix.h>
#include <poll.h>
#include <pwd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/log.h"
#include "common/quote.h"

namespace qrm {

StatusOr<std::set<uid_t>> ParseUidList(const std::string& text, const std::string& flag) {
  std::set<uid_t> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    start = comma + 1;
    if (item.empty()) {
      return InvalidArgumentError(fmt::format(
          "{}: invalid value {} (expected user names or ids, comma-separated)", flag, Quote(text)));
    }
    unsigned long id = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), id);
    if (ec == std::errc() && end == item.data() + item.size()) {
      out.insert(static_cast<uid_t>(id));
      continue;
    }
    passwd pw{};
    passwd* found = nullptr;
    std::string buf(16384, '\0');
    if (::getpwnam_r(item.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || !found) {
      return InvalidArgumentError(fmt::format("{}: unknown user {}", flag, Quote(item)));
    }
    out.insert(found->pw_uid);
  }
  return out;
}

StatusOr<std::set<gid_t>> ParseGidList(const std::string& text, const std::string& flag) {
  std::set<gid_t> out;
  if (text.empty()) return out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    start = comma + 1;
    if (item.empty()) {
      return InvalidArgumentError(
          fmt::format("{}: invalid value {} (expected group names or ids, comma-separated)", flag,
                      Quote(text)));
    }
    auto gid = ResolveGroup(item, flag);
    if (!gid.ok()) return gid.status();
    out.insert(*gid);
  }
  return out;
}

PeerCheckedListener::PeerCheckedListener(std::string path, PeerAllowlist allow,
                                         SocketPermissions perms, std::string component,
                                         RefusalHook on_refused)
    : path_(std::move(path)),
      allow_(std::move(allow)),
      perms_(perms),
      component_(std::move(component)),
      on_refused_(std::move(on_refused)) {}

PeerCheckedListener::~PeerCheckedListener() {
  Stop();
}

Status PeerCheckedListener::Start(grpc::Server* server) {
  server_ = server;
  QRM_RETURN_IF_ERROR(PrepareSocketPath(path_, perms_));
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) return ErrnoError(errno, "socket", path_);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_fd_, 128) != 0) {
    Status s = ErrnoError(errno, "listen", path_);
    ::close(listen_fd_);
    listen_fd_ = -1;
    return s;
  }
  if (Status s = ApplySocketPermissions(path_, perms_); !s.ok()) {
    ::close(listen_fd_);
    listen_fd_ = -1;
    return s;
  }
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return ErrnoError(errno, "eventfd", path_);
  thread_ = std::thread([this] { AcceptLoop(); });
  return Status::Ok();
}

void PeerCheckedListener::Stop() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
    thread_.join();
  }
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
    ::unlink(path_.c_str());
  }
  if (wake_fd_ >= 0) {
    ::close(wake_fd_);
    wake_fd_ = -1;
  }
}

void PeerCheckedListener::AcceptLoop() {
  auto log = Logger(component_);
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      log->error("socket={}: poll failed: {}", path_, std::strerror(errno));
      return;
    }
    if (fds[1].revents != 0) return;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) continue;  // EAGAIN or a connection that went away
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
      log->warn("socket={}: refused a connection: cannot read peer credentials: {}", path_,
                std::strerror(errno));
      ::close(fd);
      ++refused_;
      if (on_refused_) on_refused_();
      continue;
    }
    if (!allow_.Allows(cred.uid, cred.gid)) {
      log->warn(
          "socket={} ({}): refused a connection from pid {} uid {} gid {}: neither the uid nor the "
          "gid is on the allowlist",
          path_, component_, cred.pid, cred.uid, cred.gid);
      ::close(fd);
      ++refused_;
      if (on_refused_) on_refused_();
      continue;
    }
    ++accepted_;
    // gRPC owns fd from here; its endpoints need a non-blocking descriptor.
    grpc::AddInsecureChannelFromFd(server_, fd);
  }
}

}  // namespace qrm
