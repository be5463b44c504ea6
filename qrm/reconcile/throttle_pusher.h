// ThrottlePusher: brings the runtime in line with the host's CPU throttles
// (qrm/throttle/throttle_store.h). The admin call that sets or clears a throttle pushes it at
// once (the guard's breach-to-cgroup latency, bench P13); every reconcile tick expires leases,
// forgets the throttles of containers the host no longer holds and pushes whatever is still
// pending (a failed push, the entries loaded at start, restores).
//
// A push sends the container's whole current owned fields (Admission::CurrentUpdate, which
// includes the throttle), so it never undoes a plugin's cpuset. Pushes are serialized: two
// pushes of one container cannot reach the runtime in the reverse order of their reads.
#pragma once

#include <string>

#include "common/mutex.h"
#include "common/status.h"
#include "qrm/admission/admission.h"
#include "qrm/reconcile/runtime.h"
#include "qrm/state/pod_resources.h"
#include "qrm/throttle/throttle_store.h"

namespace qrm::host {

struct ThrottleTickStats {
  int pushed = 0;
  int push_failures = 0;
  int expired = 0;
  int forgotten = 0;
};

class ThrottlePusher {
 public:
  ThrottlePusher(Admission& admission, RuntimeApplier& applier)
      : admission_(admission), applier_(applier) {}

  // Pushes one container's current fields; OK if it holds no throttle. On failure the entry
  // stays pending for the next tick.
  Status Push(const ThrottleStore::Key& key);
  // Expires leases, drops entries of containers not in `pods`, pushes what is pending.
  ThrottleTickStats Tick(const PodResources& pods);

 private:
  Status PushLocked(ThrottleStore& store, const ThrottleStore::Key& key) QRM_REQUIRES(mu_);

  Admission& admission_;
  RuntimeApplier& applier_;
  Mutex mu_;  // one push at a time (see the header comment); guards no member
};

}  // namespace qrm::host
