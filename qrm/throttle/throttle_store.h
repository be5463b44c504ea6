// ThrottleStore: the CPU throttles qrm-host holds containers at (cpu_throttle.h), durable in
// one checkpoint file (<state dir>/cpu-throttles.json, docs/checkpoint-format.md).
//
// Every change is written before it is taken in memory (a failed write changes nothing) and
// before anything reaches the runtime, so after a crash of qrm-host the file says what the
// containers should hold, and the host pushes every entry once at start. Which entries the
// runtime already holds is kept in memory only: "pending" entries are pushed by the reconcile
// tick (and at once by the admin call that changed them) until a push succeeds. A cleared or
// expired throttle is kept, "restoring", until the restore values reached the runtime; then it
// is forgotten. The reconcile tick forgets the entries of containers the host no longer holds
// the same way (Clear, then Applied), after pushing their restore values when their pod's
// record is gone but its containers may still run.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "qrm/apply/container_update.h"
#include "qrm/throttle/cpu_throttle.h"

namespace qrm::throttle {

class ThrottleStore {
 public:
  using Key = std::pair<std::string, std::string>;  // pod uid, container name
  using Clock = std::function<int64_t()>;           // Unix seconds

  // `path` is the state file; `now` the wall clock (leases outlive restarts).
  explicit ThrottleStore(std::string path, Clock now = {});

  // Reads the file (missing: no throttles). A corrupt file is moved aside and reported
  // (kDataLoss): the host starts without throttles rather than act on what it cannot read.
  Status Load();

  // Sets or renews a throttle (validated). The first restore values of a container are
  // kept (later callers see the throttled values in the runtime), and so is `since`. A
  // restoring entry is throttled again. Returns the entry as stored.
  StatusOr<CpuThrottle> Set(const CpuThrottleRequest& request);
  // Starts restoring the container; false if it holds no throttle.
  StatusOr<bool> Clear(const std::string& pod_uid, const std::string& container);
  // Leases past their expiry start restoring; returns the containers that did.
  StatusOr<std::vector<Key>> ExpireLeases();
  // The kubelet changed the container's own quota/period (an in-place resize) while it is
  // throttled: that is what a restore gives back now.
  Status NoteKubeletLimit(const std::string& pod_uid, const std::string& container,
                          int64_t quota_us, int64_t period_us);

  // Sets cpu_quota and cpu_period, owned, in `update` if the container has an entry.
  void Overlay(const std::string& pod_uid, const std::string& container,
               apply::ContainerUpdate* update) const;
  // Entries not yet known to be in the runtime.
  std::vector<Key> Pending() const;
  // A push that carried `quota_us`/`period_us` succeeded: the entry is in the runtime if those
  // are still its effective values; a restoring one is then forgotten.
  Status Applied(const Key& key, int64_t quota_us, int64_t period_us);

  std::optional<CpuThrottle> Get(const std::string& pod_uid, const std::string& container) const;
  std::vector<CpuThrottle> List() const;
  bool IsPending(const Key& key) const;
  const std::string& path() const { return path_; }

 private:
  using Entries = std::map<Key, CpuThrottle>;
  // The entries as they are, for a change to start from (no other change can interleave).
  Entries Current() const QRM_REQUIRES(write_mu_) QRM_EXCLUDES(mu_);
  // Writes `next` durably, then takes it: memory and disk change together. `not_in_runtime`
  // are entries whose effective values changed (they must be pushed again); entries that are
  // gone leave in_runtime_ too, in the same step.
  Status Commit(Entries next, const std::vector<Key>& not_in_runtime = {}) QRM_REQUIRES(write_mu_)
      QRM_EXCLUDES(mu_);

  const std::string path_;
  const Clock now_;
  // Serialises the changes and is held across their durable write. Readers (Overlay on every
  // admission, the reconcile tick) take only mu_, which is never held across I/O: a guard
  // throttling many containers at once does not stall admissions behind its fsyncs.
  mutable Mutex write_mu_;
  mutable Mutex mu_;
  Entries entries_ QRM_GUARDED_BY(mu_);
  std::set<Key> in_runtime_ QRM_GUARDED_BY(mu_);  // entries whose effective values were pushed
};

}  // namespace qrm::throttle
