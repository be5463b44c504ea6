// PodLocks: serializes work on one pod while different pods proceed in
// parallel. Entries live only while someone holds or waits for them. Admission holds one per
// pod across a whole admission; StateStore holds its own per pod across one durable write.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/mutex.h"

namespace qrm {

class PodLocks {
 public:
  class Guard {
   public:
    Guard(PodLocks& owner, std::string uid);
    ~Guard();
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    PodLocks& owner_;
    std::string uid_;
    std::shared_ptr<std::mutex> mu_;
  };

  Guard Lock(const std::string& uid) { return Guard(*this, uid); }

 private:
  struct Entry {
    std::shared_ptr<std::mutex> mu = std::make_shared<std::mutex>();
    int users = 0;
  };
  Mutex mu_;
  std::map<std::string, Entry> entries_ QRM_GUARDED_BY(mu_);
};

inline PodLocks::Guard::Guard(PodLocks& owner, std::string uid)
    : owner_(owner), uid_(std::move(uid)) {
  {
    MutexLock lock(owner_.mu_);
    Entry& e = owner_.entries_[uid_];
    ++e.users;
    mu_ = e.mu;
  }
  mu_->lock();
}

inline PodLocks::Guard::~Guard() {
  mu_->unlock();
  MutexLock lock(owner_.mu_);
  auto it = owner_.entries_.find(uid_);
  if (--it->second.users == 0) owner_.entries_.erase(it);
}

}  // namespace qrm
