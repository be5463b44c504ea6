// The file operations the checkpoint and journal writers share (and the advisor, for the small
// control file it owns: advisor/pools):
// every failure is a Status naming the file, and EINTR is retried.
#pragma once

#include <string>
#include <string_view>

#include "checkpoint/checkpoint_file.h"
#include "common/status.h"

namespace qrm::checkpoint::file_io {

// Closes a descriptor on scope exit unless released; close errors on the write path are
// checked explicitly before this runs.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser();
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

struct SplitPath {
  std::string dir;
  std::string base;
};
SplitPath Split(const std::string& path);

// ".<base>.tmp-": the prefix of every temp file written for `base` (RemoveStaleTempFiles).
std::string TempPrefix(const SplitPath& p);

// Replaces `path` with `content` atomically and durably: a temp file in the same directory
// (mode options.file_mode) is written and fsync'ed, renamed over `path`, and the directory is
// fsync'ed; options.fault_hook sees each step before it runs. On failure `path` is untouched
// and no temp file remains. With `keep_open` the new file's descriptor, opened for appending,
// is returned (the caller owns it); otherwise the file is closed (a deferred close error is
// reported) and -1 is returned.
StatusOr<int> ReplaceFile(const std::string& path, std::string_view content,
                          const WriteOptions& options, bool keep_open);

Status WriteAll(int fd, std::string_view bytes, const std::string& what);
Status SyncDirectory(const std::string& dir);
// kNotFound reads "<kind> <path>: does not exist".
StatusOr<std::string> ReadWholeFile(const std::string& path, std::string_view kind);

// Renames an unusable `path` to "<path>.<why>-<unix-time>[.N]" (why: "corrupt",
// "unsupported-version"), never over an existing file, and syncs the directory: the evidence is
// kept and the next write starts afresh. Returns the new name; kAlreadyExists after 1000
// copies in the same second.
StatusOr<std::string> MoveAside(const std::string& path, std::string_view why = "corrupt");

}  // namespace qrm::checkpoint::file_io
