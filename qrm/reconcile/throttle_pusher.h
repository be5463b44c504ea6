// ThrottlePusher: brings the runtime in line with the host's CPU throttles
// (qrm/throttle/throttle_store.h). The admin call that sets or clears a throttle pushes it at
// once (the guard's breach-to-cgroup latency, bench P13); every reconcile tick expires leases,
// forgets the throttles of containers the host no longer holds and pushes whatever is still
// pending (a failed push, the entries loaded at start, restores).
//
// A push sends the container's whole current owned fields (Admission::CurrentUpdate, which
// includes the throttle) through the ContainerWriter, so it never undoes a plugin's cpuset and
// is never overtaken by a reconcile write that read older values.
#pragma once

#include <string>

#include "common/status.h"
#include "qrm/admission/admission.h"
#include "qrm/reconcile/container_writer.h"
#include "qrm/state/pod_resources.h"
#include "qrm/throttle/throttle_store.h"

namespace qrm::reconcile {

struct ThrottleTickStats {
  int pushed = 0;
  int push_failures = 0;
  int expired = 0;
  int forgotten = 0;
};

class ThrottlePusher {
 public:
  ThrottlePusher(admission::Admission& admission, ContainerWriter& writer)
      : admission_(admission), writer_(writer) {}

  // Pushes one container's current fields; OK if it holds no throttle. On failure the entry
  // stays pending for the next tick.
  Status Push(const throttle::ThrottleStore::Key& key);
  // Expires leases, forgets entries of containers not in `pods` (a pod's container the host
  // no longer holds gets its restore values first: its pod's record may be lost while it
  // runs on), pushes what is pending.
  ThrottleTickStats Tick(const state::PodResources& pods);

 private:
  Status PushTo(throttle::ThrottleStore& store, const throttle::ThrottleStore::Key& key);
  StatusOr<int> ForgetUnheld(throttle::ThrottleStore& store, const state::PodResources& pods);
  // Restores the throttles of a pod the host no longer holds; false if that must be retried.
  bool RestoreUnheld(const throttle::CpuThrottle& t);

  admission::Admission& admission_;
  ContainerWriter& writer_;
};

}  // namespace qrm::reconcile
