#include "cri-shim/socket_file.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fmt/format.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace qrm::shim {
namespace {

// Whether something accepts connections on the socket at `path`.
StatusOr<bool> SomeoneListens(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    return InvalidArgumentError(
        fmt::format("socket path {} is longer than {} bytes", path, sizeof(addr.sun_path) - 1));
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return ErrnoError(errno, "socket", path);
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  const int err = errno;
  ::close(fd);
  if (rc == 0) return true;
  if (err == ECONNREFUSED || err == ENOENT) return false;
  return ErrnoError(err, "connect", path);
}

}  // namespace

Status PrepareSocketPath(const std::string& path) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) {
    std::error_code ec;
    if (!std::filesystem::exists(dir, ec)) {
      std::filesystem::create_directories(dir, ec);
      if (ec) return ErrnoError(ec.value(), "mkdir", dir.string());
      ::chmod(dir.c_str(), 0755);
    }
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return ErrnoError(errno, "stat", path);
  }
  if (!S_ISSOCK(st.st_mode)) {
    return AlreadyExistsError(
        fmt::format("CRI socket path {} exists and is not a socket; not removing it", path));
  }
  QRM_ASSIGN_OR_RETURN(auto listening, SomeoneListens(path));
  if (listening) {
    return FailedPreconditionError(
        fmt::format("another process is serving on {} (is qrm-host already running?)", path));
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoError(errno, "unlink", path);
  return Status::Ok();
}

StatusOr<gid_t> ResolveGroup(const std::string& flag, const std::string& group) {
  if (group.empty()) return InvalidArgumentError(fmt::format("{}: empty group", flag));
  if (group.find_first_not_of("0123456789") == std::string::npos) {
    errno = 0;
    char* end = nullptr;
    const unsigned long gid = std::strtoul(group.c_str(), &end, 10);
    if (errno != 0 || *end != '\0' || gid > static_cast<unsigned long>(static_cast<gid_t>(-2))) {
      return InvalidArgumentError(fmt::format("{} \"{}\": gid out of range", flag, group));
    }
    return static_cast<gid_t>(gid);
  }
  std::vector<char> buffer(16384);
  struct group entry {};
  struct group* found = nullptr;
  int rc = 0;
  // Group files with huge member lists need more room than the first guess.
  while ((rc = ::getgrnam_r(group.c_str(), &entry, buffer.data(), buffer.size(), &found)) ==
             ERANGE &&
         buffer.size() < (1u << 22)) {
    buffer.resize(buffer.size() * 4);
  }
  if (rc != 0 || found == nullptr) {
    return InvalidArgumentError(fmt::format("{} \"{}\": no such group", flag, group));
  }
  return found->gr_gid;
}

Status MatchSocketPermissions(const std::string& path, const std::string& like,
                              std::optional<mode_t> mode, std::optional<gid_t> group) {
  struct stat st {};
  if (::stat(like.c_str(), &st) != 0) return ErrnoError(errno, "stat", like);
  const gid_t gid = group.value_or(st.st_gid);
  if (::chown(path.c_str(), st.st_uid, gid) != 0) return ErrnoError(errno, "chown", path);
  const mode_t bits = mode.value_or(st.st_mode & 07777);
  if (::chmod(path.c_str(), bits) != 0) return ErrnoError(errno, "chmod", path);
  return Status::Ok();
}

}  // namespace qrm::shim
