#include "common/unix_socket.h"

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/quote.h"

namespace qrm {

SocketPermissions SocketPermissionsFor(std::optional<gid_t> group) {
  if (!group.has_value()) return SocketPermissions{};
  return SocketPermissions{0660, group, 0750};
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
  if (!parent.empty()) {
    std::error_code ec;
    if (!std::filesystem::exists(parent, ec)) {
      std::filesystem::create_directories(parent, ec);
      if (ec) return ErrnoError(ec.value(), "create directory", parent.string());
      if (::chmod(parent.c_str(), perms.dir_mode) != 0) {
        return ErrnoError(errno, "chmod", parent.string());
      }
      if (perms.group.has_value() &&
          ::chown(parent.c_str(), static_cast<uid_t>(-1), *perms.group) != 0) {
        return ErrnoError(errno, "chown", parent.string());
      }
    }
  }
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

}  // namespace qrm
