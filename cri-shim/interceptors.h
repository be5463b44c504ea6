// Interceptors: what the shim does for the CRI methods it decodes.
//
//  RunPodSandbox      forwarded; the new sandbox id -> pod is recorded.
//  CreateContainer    the normalized request is admitted (host::Admission::Admit), owned
//                     fields, envs and annotations are written into the request in place,
//                     then it is forwarded. If the runtime refuses it, the admission is
//                     released again (Admission::ReleaseContainer) unless another container
//                     of that name still uses it.
//  StartContainer     PreStartContainer on every plugin of the container that asked for it
//                     (pre_start_required), then forwarded; a plugin failure fails the start.
//  RemoveContainer    forwarded; once the runtime confirms, the container leaves the host
//                     checkpoint (Admission::RemoveContainer) unless another container of
//                     that name (a restart) or a create in flight still uses it.
//  StopPodSandbox,    forwarded; once the runtime confirms, the pod is released
//  RemovePodSandbox   (Admission::RemovePod) unless it has another ready sandbox.
//  UpdateContainer-   forwarded with qrm's owned fields set to qrm's current values
//  Resources          (Admission::CurrentUpdate); never swallowed. If qrm's values change
//                     while it is in flight, the newest are sent again afterwards.
//
// Skipped pods (skip_rules.h) and requests the shim cannot decode are forwarded byte for
// byte. Locking: qrm's steps for one pod (admit + note the create; decide + release) run
// under the shim's per-pod lock, so a release can never interleave with an admission of
// the same container; no lock is held while the runtime or a plugin's PreStartContainer
// is called, and pass-through calls take no lock at all.
#pragma once

#include "cri-shim/counters.h"
#include "cri-shim/intercepted_call.h"
#include "cri-shim/method_table.h"
#include "cri-shim/runtime_index.h"
#include "cri-shim/shim_options.h"
#include "qrm/host/host.h"
#include "qrm/state/pod_locks.h"

namespace qrm::shim {

class Interceptors {
 public:
  // `applier` re-sends qrm's fields when they change during a kubelet update.
  Interceptors(const ShimOptions& options, host::Host& host, RuntimeIndex& index,
               host::RuntimeApplier& applier, ShimCounters& counters);

  // Handles an intercepted method other than RunPodSandbox. May block: runs on the pool.
  Answer Handle(Intercept kind, InterceptedCall& call);
  // Records the sandbox a successful RunPodSandbox created. Never blocks.
  void RecordSandbox(const grpc::ByteBuffer& request, const grpc::ByteBuffer& response);

 private:
  Answer CreateContainer(InterceptedCall& call);
  Answer StartContainer(InterceptedCall& call);
  Answer RemoveContainer(InterceptedCall& call);
  Answer StopOrRemovePodSandbox(InterceptedCall& call, bool remove);
  Answer UpdateContainerResources(InterceptedCall& call);
  // Forwards the request as it came.
  Answer Forward(InterceptedCall& call, const grpc::ByteBuffer& request);
  // Releases the pod unless it still has a ready sandbox; called under the pod lock.
  void ReleasePodIfGone(const std::string& pod_uid, const std::string& sandbox_id);

  const ShimOptions& options_;
  host::Host& host_;
  RuntimeIndex& index_;
  host::RuntimeApplier& applier_;
  ShimCounters& counters_;
  // The shim's own per-pod locks (Admission locks its own per call; sharing them would
  // deadlock, since the shim calls Admission while holding the pod).
  host::PodLocks pod_locks_;
};

}  // namespace qrm::shim
