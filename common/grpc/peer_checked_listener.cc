#include "common/grpc/peer_checked_listener.h"

#include <cerrno>
#include <charconv>
#include <cstring>

#include <fcntl.h>
#include <fmt/format.h>
#include <grpcpp/server.h>
#include <pwd.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

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
    QRM_ASSIGN_OR_RETURN(auto gid, ResolveGroup(item, flag));
    out.insert(gid);
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
  QRM_RETURN_IF_ERROR(PrepareSocketPath(path_, perms_));
  QRM_ASSIGN_OR_RETURN(auto fd, ListenUnixSocket(path_));
  if (Status s = ApplySocketPermissions(path_, perms_); !s.ok()) {
    ::close(fd);
    return s;
  }
  return Adopt(server, fd);
}

Status PeerCheckedListener::Adopt(grpc::Server* server, int listen_fd) {
  server_ = server;
  listen_fd_ = listen_fd;
  const int flags = ::fcntl(listen_fd_, F_GETFL);
  if (flags < 0 || ::fcntl(listen_fd_, F_SETFL, flags | O_NONBLOCK) != 0) {
    return ErrnoError(errno, "set non-blocking", path_);
  }
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) return ErrnoError(errno, "stat", path_);
  socket_dev_ = st.st_dev;
  socket_ino_ = st.st_ino;
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return ErrnoError(errno, "eventfd", path_);
  alive_ = true;
  thread_ = std::thread([this] { AcceptLoop(); });
  return Status::Ok();
}

void PeerCheckedListener::Stop() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
    thread_.join();
  }
  alive_ = false;
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
    // Only our own socket: another process may have taken the path over meanwhile.
    struct stat st {};
    if (::lstat(path_.c_str(), &st) == 0 && st.st_dev == socket_dev_ && st.st_ino == socket_ino_) {
      ::unlink(path_.c_str());
    }
  }
  if (wake_fd_ >= 0) {
    ::close(wake_fd_);
    wake_fd_ = -1;
  }
}

}  // namespace qrm
