// ReleaseClaims: who releases a pod, the runtime call in flight or the reconcile loop.
//
// The CRI shim releases a pod (Admission::RemovePod) once the runtime confirms its
// StopPodSandbox or RemovePodSandbox. While such a call is in flight the runtime already
// lists the sandbox as not ready, so the reconcile loop would see a pod "gone from the
// runtime" and release it first, before the runtime confirmed, and the shim's own release
// would then find nothing to do. To make the order deliberate:
//  * the shim claims the pod for the whole call (Hold, before forwarding it); the claim ends
//    when the call is done, after the shim's release;
//  * the reconcile loop releases a pod only inside TryRelease, which refuses a claimed pod.
//    The next tick sees the pod as usual, so a release the shim could not finish is retried.
// The two exclude each other per pod: Hold waits while a reconcile release of that pod is
// running (a pod the runtime had already stopped before this call: the reconcile loop's
// release is the one that counts, and the shim's then finds nothing left). Claims nest: a
// StopPodSandbox and a RemovePodSandbox of one pod may be in flight at once.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "common/mutex.h"

namespace qrm::reconcile {

class ReleaseClaims {
 public:
  // A claim (Hold) or a reconcile release (TryRelease) of one pod, until destroyed.
  class Guard {
   public:
    Guard(ReleaseClaims& owner, std::string uid, bool claim)
        : owner_(owner), uid_(std::move(uid)), claim_(claim) {}
    ~Guard() { owner_.End(uid_, claim_); }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    ReleaseClaims& owner_;
    std::string uid_;
    bool claim_;
  };

  // Claims `uid` for a runtime call that will release it; waits for a reconcile release of
  // `uid` in progress to finish first.
  [[nodiscard]] Guard Hold(const std::string& uid) {
    MutexLock lock(mu_);
    mu_.Await(changed_, [&]() QRM_REQUIRES(mu_) { return !pods_[uid].releasing; });
    ++pods_[uid].claims;
    return Guard(*this, uid, true);
  }
  // Starts a reconcile release of `uid`; nullopt, and nothing started, if it is claimed.
  [[nodiscard]] std::optional<Guard> TryRelease(const std::string& uid) {
    MutexLock lock(mu_);
    auto it = pods_.find(uid);
    if (it != pods_.end() && (it->second.claims > 0 || it->second.releasing)) return std::nullopt;
    pods_[uid].releasing = true;
    return std::optional<Guard>(std::in_place, *this, uid, false);
  }
  bool Held(const std::string& uid) const {
    MutexLock lock(mu_);
    auto it = pods_.find(uid);
    return it != pods_.end() && it->second.claims > 0;
  }

 private:
  struct State {
    int claims = 0;
    bool releasing = false;
  };
  void End(const std::string& uid, bool claim) {
    {
      MutexLock lock(mu_);
      State& s = pods_[uid];
      if (claim) {
        --s.claims;
      } else {
        s.releasing = false;
      }
      if (s.claims == 0 && !s.releasing) pods_.erase(uid);
    }
    changed_.notify_all();
  }

  mutable Mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, State> pods_ QRM_GUARDED_BY(mu_);
};

}  // namespace qrm::reconcile
