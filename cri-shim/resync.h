// Resync: brings the shim and the host checkpoint in line with what the runtime has, before
// the CRI socket opens (qrm-host may have been down while the kubelet removed things).
//
//  1. ListPodSandbox and ListContainers (every state) from the runtime.
//  2. The RuntimeIndex is rebuilt from them (sandbox -> pod, container -> pod + name).
//  3. Checkpointed pods without a ready sandbox are released (Admission::RemovePod: the
//     plugins' RemovePod, then the checkpoint); in the others, checkpointed containers the
//     runtime no longer lists leave the checkpoint (Admission::RemoveContainer). The rest
//     is kept as it is: running containers keep their allocations.
// Release failures (a plugin down) are logged and counted, not fatal: the pod stays in the
// checkpoint and the reconcile loop's garbage collection retries it.
#pragma once

#include "common/status.h"
#include "cri-shim/runtime_channels.h"
#include "cri-shim/runtime_index.h"
#include "cri-shim/shim_options.h"
#include "qrm/host/host.h"

namespace qrm::shim {

struct ResyncStats {
  size_t sandboxes = 0;            // listed by the runtime
  size_t containers = 0;           // listed by the runtime
  size_t pods_released = 0;        // checkpointed pods the runtime no longer runs
  size_t containers_released = 0;  // checkpointed containers it no longer has
  size_t kept = 0;                 // checkpointed containers still there
  size_t failures = 0;             // releases that failed (retried by reconcile)
};

// Fails (nothing changed) only if the runtime cannot be listed.
StatusOr<ResyncStats> Resync(const ShimOptions& options, RuntimeChannels& channels,
                             RuntimeIndex& index, host::Host& host);

}  // namespace qrm::shim
