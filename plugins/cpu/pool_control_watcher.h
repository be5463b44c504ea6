// PoolControlWatcher: notices new versions of the pool control file.
//
// It watches the file's directory, not the file: writers replace the file by renaming a temp
// file over it, which a watch on the old inode would never see. Every rename onto the name
// (IN_MOVED_TO) and every completed in-place write (IN_CLOSE_WRITE) calls `on_change` on the
// watcher's own thread; deleting the file changes nothing (the last sizes stay).
#pragma once

#include <functional>
#include <string>
#include <thread>

#include "common/status.h"

namespace qrm::cpu {

class PoolControlWatcher {
 public:
  PoolControlWatcher(const std::string& path, std::function<void()> on_change);
  ~PoolControlWatcher();
  PoolControlWatcher(const PoolControlWatcher&) = delete;
  PoolControlWatcher& operator=(const PoolControlWatcher&) = delete;

  // Creates the directory if it is missing and starts watching. Changes made before Start are
  // not reported: read the file once yourself after Start.
  Status Start();
  // Stops the thread. Idempotent.
  void Stop();

 private:
  void Loop();

  std::string dir_;
  std::string name_;
  std::function<void()> on_change_;
  int inotify_fd_ = -1;
  int wake_fd_ = -1;
  std::thread thread_;
};

}  // namespace qrm::cpu
