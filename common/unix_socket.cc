#include "common/unix_socket.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/quote.h"

namespace qrm {

SocketPermissions SocketPermissionsFor(std::optional<gid_t> group) {
  if (!group.has_value()) return SocketPermissions{};
  return SocketPermissions{0660, group, 0750};
}

Status CreateDirectories(const std::filesystem::path& dir, mode_t mode,
                         std::optional<gid_t> group) {
  std::error_code ec;
  if (dir.empty() || std::filesystem::exists(dir, ec)) return Status::Ok();
  QRM_RETURN_IF_ERROR(CreateDirectories(dir.parent_path(), mode, group));
  if (::mkdir(dir.c_str(), mode) != 0) {
    if (errno == EEXIST) return Status::Ok();  // created meanwhile by someone else
    return ErrnoError(errno, "create directory", dir.string());
  }
  // Every level gets the mode (not the umask's narrowing) and the group: a group member
  // must be able to pass each directory qrm created on the way to its socket.
  if (::chmod(dir.c_str(), mode) != 0) return ErrnoError(errno, "chmod", dir.string());
  if (group.has_value() && ::chown(dir.c_str(), static_cast<uid_t>(-1), *group) != 0) {
    return ErrnoError(errno, "chown", dir.string());
  }
  return Status::Ok();
}

Status PrepareSocketPath(const std::string& path, mode_t dir_mode) {
  return PrepareSocketPath(path, SocketPermissions{0600, std::nullopt, dir_mode});
}

Status PrepareSocketPath(const std::string& path, const SocketPermissions& perms) {
  if (path.empty() || path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return InvalidArgumentError(fmt::format("socket path {} is empty or longer than {} bytes",
                                            Quote(path), sizeof(sockaddr_un{}.sun_path) - 1));
  }
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) QRM_RETURN_IF_ERROR(CreateDirectories(parent, perms.dir_mode, perms.group));
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return ErrnoError(errno, "stat", path);
  }
  if (!S_ISSOCK(st.st_mode)) {
    return FailedPreconditionError(
        fmt::format("{} exists and is not a socket; refusing to replace it", path));
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoError(errno, "remove stale socket", path);
  }
  return Status::Ok();
}

StatusOr<int> ListenUnixSocket(const std::string& path, int backlog) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) {
    return InvalidArgumentError(fmt::format("socket path {} is longer than {} bytes", Quote(path),
                                            sizeof(addr.sun_path) - 1));
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return ErrnoError(errno, "socket", path);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(fd, backlog) != 0) {
    Status s = ErrnoError(errno, "listen", path);
    ::close(fd);
    return s;
  }
  return fd;
}

Status ApplySocketPermissions(const std::string& path, const SocketPermissions& perms) {
  if (perms.group.has_value() && ::chown(path.c_str(), static_cast<uid_t>(-1), *perms.group) != 0) {
    return ErrnoError(errno, "chown", path);
  }
  if (::chmod(path.c_str(), perms.mode) != 0) return ErrnoError(errno, "chmod", path);
  return Status::Ok();
}

StatusOr<std::string> ParseUnixEndpoint(const std::string& endpoint, const std::string& flag) {
  std::string path = endpoint;
  if (path.rfind("unix://", 0) == 0) {
    path = path.substr(7);
  } else if (path.rfind("unix:", 0) == 0) {
    path = path.substr(5);
  }
  if (path.empty() || path[0] != '/') {
    return InvalidArgumentError(
        fmt::format("{}: invalid endpoint {} (expected an absolute socket path or unix:///path)",
                    flag, Quote(endpoint)));
  }
  return path;
}

StatusOr<gid_t> ResolveGroup(const std::string& name_or_id, const std::string& flag) {
  unsigned long id = 0;
  auto [end, ec] = std::from_chars(name_or_id.data(), name_or_id.data() + name_or_id.size(), id);
  if (ec == std::errc() && end == name_or_id.data() + name_or_id.size() && !name_or_id.empty()) {
    return static_cast<gid_t>(id);
  }
  group grp{};
  group* found = nullptr;
  std::string buf(16384, '\0');
  if (::getgrnam_r(name_or_id.c_str(), &grp, buf.data(), buf.size(), &found) != 0 ||
      found == nullptr) {
    return InvalidArgumentError(fmt::format("{}: unknown group {}", flag, Quote(name_or_id)));
  }
  return found->gr_gid;
}

bool SomeoneListens(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return true;  // cannot tell: leave it alone
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  const int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  const int err = errno;
  ::close(fd);
  return rc == 0 || err != ECONNREFUSED;
}

}  // namespace qrm
