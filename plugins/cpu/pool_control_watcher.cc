#include "plugins/cpu/pool_control_watcher.h"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "common/errno_text.h"
#include "common/log.h"

namespace qrm::cpu {

PoolControlWatcher::PoolControlWatcher(const std::string& path, std::function<void()> on_change)
    : on_change_(std::move(on_change)) {
  const std::filesystem::path p(path);
  dir_ = p.parent_path().empty() ? "." : p.parent_path().string();
  name_ = p.filename().string();
}

PoolControlWatcher::~PoolControlWatcher() {
  Stop();
}

Status PoolControlWatcher::Start() {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return ErrnoError(ec.value(), "create directory", dir_);
  inotify_fd_ = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (inotify_fd_ < 0) return ErrnoError(errno, "inotify_init1 for", dir_);
  if (::inotify_add_watch(inotify_fd_, dir_.c_str(), IN_CLOSE_WRITE | IN_MOVED_TO) < 0) {
    const int err = errno;
    Stop();
    return ErrnoError(err, "watch", dir_);
  }
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    const int err = errno;
    Stop();
    return ErrnoError(err, "eventfd for", dir_);
  }
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void PoolControlWatcher::Stop() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof(one));
    thread_.join();
  }
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
  inotify_fd_ = wake_fd_ = -1;
}

void PoolControlWatcher::Loop() {
  alignas(inotify_event) char buf[4096];
  while (true) {
    pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      Logger("cpu-plugin")->error("pool control watcher on {}: poll: {}", dir_, ErrnoText(errno));
      return;
    }
    if (fds[1].revents != 0) return;
    bool changed = false;
    while (true) {
      const ssize_t n = ::read(inotify_fd_, buf, sizeof(buf));
      if (n <= 0) break;
      for (ssize_t off = 0; off < n;) {
        const auto* ev = reinterpret_cast<const inotify_event*>(buf + off);
        if (ev->len > 0 && name_ == ev->name) changed = true;
        off += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
      }
    }
    if (changed) on_change_();
  }
}

}  // namespace qrm::cpu
