#include "checkpoint/file_io.h"

#include <cerrno>

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

namespace qrm::checkpoint::file_io {

FdCloser::~FdCloser() {
  if (fd_ >= 0) ::close(fd_);
}

SplitPath Split(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  if (slash == 0) return {"/", path.substr(1)};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

Status WriteAll(int fd, std::string_view bytes, const std::string& what) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "write", what);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "open directory", dir);
  FdCloser closer(fd);
  if (::fsync(fd) != 0) return ErrnoError(errno, "fsync directory", dir);
  return Status::Ok();
}

StatusOr<std::string> ReadWholeFile(const std::string& path, std::string_view kind) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return NotFoundError(fmt::format("{} {}: does not exist", kind, path));
    return ErrnoError(errno, "open", path);
  }
  FdCloser closer(fd);
  std::string content;
  char buf[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, "read", path);
    }
    if (n == 0) break;
    content.append(buf, static_cast<size_t>(n));
  }
  return content;
}

}  // namespace qrm::checkpoint::file_io
