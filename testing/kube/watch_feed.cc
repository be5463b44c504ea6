#include "testing/kube/watch_feed.h"

#include <utility>

namespace qrm::testing {

std::function<void()> WatchFeed::TakeWake() {
  std::function<void()> wake = std::move(wake_);
  wake_ = nullptr;
  return wake;
}

void WatchFeed::Push(const std::string& event) {
  std::function<void()> wake;
  {
    MutexLock lock(mu_);
    if (closed_ || cancelled_) return;
    queued_ += event;
    queued_ += '\n';
    wake = TakeWake();
  }
  if (wake) wake();  // outside the lock: it posts to the server's thread, which takes it
}

void WatchFeed::Close() {
  std::function<void()> wake;
  {
    MutexLock lock(mu_);
    if (closed_ || cancelled_) return;
    closed_ = true;
    wake = TakeWake();
  }
  if (wake) wake();
}

bool WatchFeed::cancelled() const {
  MutexLock lock(mu_);
  return cancelled_;
}

WatchFeed::Batch WatchFeed::Take(std::function<void()> wake) {
  MutexLock lock(mu_);
  Batch batch{std::exchange(queued_, {}), closed_};
  if (batch.data.empty() && !closed_ && !cancelled_) wake_ = std::move(wake);
  return batch;
}

void WatchFeed::Cancel() {
  MutexLock lock(mu_);
  cancelled_ = true;
  wake_ = nullptr;
}

}  // namespace qrm::testing
