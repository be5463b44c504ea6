#include "checkpoint/file_io.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
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

std::string TempPrefix(const SplitPath& p) {
  return "." + p.base + ".tmp-";
}

StatusOr<int> ReplaceFile(const std::string& path, std::string_view content,
                          const WriteOptions& options, bool keep_open) {
  const auto hook = [&options](WriteStep step) {
    return options.fault_hook ? options.fault_hook(step) : Status::Ok();
  };
  const SplitPath parts = Split(path);
  QRM_RETURN_IF_ERROR(hook(WriteStep::kCreateTemp));
  std::string temp = parts.dir + "/" + TempPrefix(parts) + "XXXXXX";
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC | (keep_open ? O_APPEND : 0));
  if (fd < 0) return ErrnoError(errno, "create temp file in", parts.dir);
  FdCloser closer(fd);

  // From here on, any failure removes the temp file so nothing half-written stays.
  auto fail = [&temp](Status s) {
    ::unlink(temp.c_str());
    return s;
  };
  if (::fchmod(fd, options.file_mode) != 0) return fail(ErrnoError(errno, "chmod", temp));
  if (Status s = hook(WriteStep::kWriteTemp); !s.ok()) return fail(s);
  if (Status s = WriteAll(fd, content, temp); !s.ok()) return fail(s);
  if (options.sync) {
    if (Status s = hook(WriteStep::kSyncTemp); !s.ok()) return fail(s);
    if (::fsync(fd) != 0) return fail(ErrnoError(errno, "fsync", temp));
  }
  // close() can report a deferred write error (NFS, quota): check it.
  if (!keep_open && ::close(closer.Release()) != 0) {
    return fail(ErrnoError(errno, "close", temp));
  }
  if (Status s = hook(WriteStep::kRename); !s.ok()) return fail(s);
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    return fail(ErrnoError(errno, fmt::format("rename {} to", temp), path));
  }
  // The new content is in place; a failed directory sync means its name may not
  // survive a power loss, so the caller must not treat the write as durable.
  if (options.sync) {
    QRM_RETURN_IF_ERROR(hook(WriteStep::kSyncDir));
    QRM_RETURN_IF_ERROR(SyncDirectory(parts.dir));
  }
  return keep_open ? closer.Release() : -1;
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

StatusOr<std::string> MoveAside(const std::string& path, std::string_view why) {
  const std::string stem = fmt::format("{}.{}-{}", path, why, std::time(nullptr));
  for (int attempt = 0; attempt < 1000; ++attempt) {
    std::string target = attempt == 0 ? stem : fmt::format("{}.{}", stem, attempt);
    if (::renameat2(AT_FDCWD, path.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) == 0) {
      QRM_RETURN_IF_ERROR(SyncDirectory(Split(path).dir));
      return target;
    }
    if (errno != EEXIST) return ErrnoError(errno, "rename", path);
  }
  return AlreadyExistsError(fmt::format("too many quarantined copies of {}", path));
}

}  // namespace qrm::checkpoint::file_io
