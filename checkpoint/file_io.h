// The file operations the checkpoint and journal writers share (internal to checkpoint/):
// every failure is a Status naming the file, and EINTR is retried.
#pragma once

#include <string>
#include <string_view>

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

Status WriteAll(int fd, std::string_view bytes, const std::string& what);
Status SyncDirectory(const std::string& dir);
// kNotFound reads "<kind> <path>: does not exist".
StatusOr<std::string> ReadWholeFile(const std::string& path, std::string_view kind);

}  // namespace qrm::checkpoint::file_io
