// ContainerWriter: the one way qrm-host writes a running container's owned fields
// (Admission::CurrentUpdate: the plugins' cpuset and mems, confinement, a CPU throttle) to
// the runtime outside the container's own CreateContainer.
//
// Three writers meet here: the reconcile tick (a plugin's new cpuset), the throttle pusher
// (the guard's quota) and the CRI shim (the newest values after the kubelet's own update).
// Each reads the current fields and writes them under one lock, so a writer that read older
// values can never land them after a writer that read newer ones: the runtime always ends at
// the newest values, not at whichever read happened to finish last.
#pragma once

#include <functional>
#include <string>

#include "common/mutex.h"
#include "common/status.h"
#include "qrm/admission/admission.h"
#include "qrm/apply/container_update.h"
#include "qrm/reconcile/runtime.h"

namespace qrm::reconcile {

class ContainerWriter {
 public:
  // Decides, from the fields about to be written, whether to write them at all.
  using Wanted = std::function<bool(const apply::ContainerUpdate&)>;
  // Told what was written, under the same lock (bookkeeping that must not be overtaken).
  using Written = std::function<Status(const apply::ContainerUpdate&)>;

  ContainerWriter(admission::Admission& admission, RuntimeApplier& applier)
      : admission_(admission), applier_(applier) {}

  // Writes the container's current fields. kNotFound if the host does not hold the
  // container; OK without writing if `wanted` says no; the runtime's error if it refused.
  Status WriteCurrent(const std::string& pod_uid, const std::string& container,
                      const Wanted& wanted = {}, const Written& written = {});
  // Writes the CPU quota and period a throttle restores to a container the host does not
  // hold (its pod's record is gone, its containers may still run): nothing else of it is
  // known, so nothing else is written.
  Status WriteRestore(const std::string& pod_uid, const std::string& container, int64_t quota_us,
                      int64_t period_us);

 private:
  admission::Admission& admission_;
  RuntimeApplier& applier_;
  Mutex mu_;  // one read-and-write at a time (see the header comment); guards no member
};

}  // namespace qrm::reconcile
