// qrm::Mutex and qrm::MutexLock: std::mutex and std::lock_guard with the thread-safety
// annotations of common/thread_annotations.h. libstdc++'s mutex types carry none, so a
// member guarded by a std::mutex cannot be checked; every mutex of qrm is a qrm::Mutex, and
// what it guards says so (QRM_GUARDED_BY).
#pragma once

#include <condition_variable>
#include <mutex>

#include "common/thread_annotations.h"

namespace qrm {

class QRM_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() QRM_ACQUIRE() { mu_.lock(); }
  void Unlock() QRM_RELEASE() { mu_.unlock(); }
  bool TryLock() QRM_TRY_ACQUIRE(true) { return mu_.try_lock(); }

  // Waits on `cv` until `done()` holds; the caller holds this mutex, which is released while
  // waiting and held again when this returns. `done` runs with the mutex held (annotate a
  // lambda that reads guarded members with QRM_REQUIRES(mu)).
  template <typename Done>
  void Await(std::condition_variable& cv, Done done) QRM_REQUIRES(this) {
    std::unique_lock<std::mutex> lock(mu_, std::adopt_lock);
    cv.wait(lock, done);
    lock.release();  // still held, by the caller
  }

 private:
  std::mutex mu_;
};

// Holds a Mutex for its scope.
class QRM_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) QRM_ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() QRM_RELEASE() { mu_.Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

}  // namespace qrm
