// Interceptors: what the shim does for the CRI methods it decodes.
//
//  RunPodSandbox      forwarded; the new sandbox id -> pod is recorded.
//  CreateContainer    the normalized request is admitted (admission::Admission::Admit), owned
//                     fields, envs and annotations are written into the request in place,
//                     then it is forwarded. If the runtime refuses it, the admission is
//                     released again (Admission::ReleaseContainer) unless another container
//                     of that name still uses it.
//  StartContainer     PreStartContainer on every plugin of the container that asked for it
//                     (pre_start_required), then forwarded; a plugin failure fails the start.
//                     Values qrm changed while the create or the start was in flight are
//                     applied once the runtime confirms (ReapplyIfChanged).
//  RemoveContainer    forwarded; once the runtime confirms, the container leaves the host
//                     checkpoint (Admission::RemoveContainer) unless another container of
//                     that name (a restart) or a create in flight still uses it.
//  StopPodSandbox,    forwarded; once the runtime confirms, the pod is released
//  RemovePodSandbox   (Admission::RemovePod) unless it has another ready sandbox. The call
//                     claims the pod's release while in flight, so the reconcile loop (which
//                     sees the sandbox not ready already) leaves the pod to it
//                     (reconcile::ReleaseClaims).
//  UpdateContainer-   forwarded with qrm's owned fields set to qrm's current values
//  Resources          (Admission::CurrentUpdate); never swallowed. If qrm's values change
//                     while it is in flight, the newest are sent again afterwards.
//
// Skipped pods (skip_rules.h) are forwarded byte for byte. A RunPodSandbox, CreateContainer,
// StartContainer or UpdateContainerResources request that does not decode is refused
// (INVALID_ARGUMENT naming the method and the field; refusals.h counts and logs it) unless
// what can be read of it shows a skipped pod: an unadmitted container must never reach the
// runtime. RemoveContainer, StopPodSandbox and RemovePodSandbox that do not decode are
// forwarded (refusing them would only keep a dead container or pod around). Locking: qrm's steps
// for one pod (admit + note the create; decide + release) run under the shim's per-pod lock, so a
// release can never interleave with an admission of the same container; no lock is held while the
// runtime or a plugin's PreStartContainer is called, and pass-through calls take no lock at all.
// Each step of an intercepted call is timed (call_phases.h).
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "common/log.h"
#include "common/mutex.h"
#include "common/pod_locks.h"
#include "cri-shim/call_phases.h"
#include "cri-shim/counters.h"
#include "cri-shim/intercepted_call.h"
#include "cri-shim/method_table.h"
#include "cri-shim/runtime_index.h"
#include "cri-shim/shim_options.h"
#include "qrm/host/host.h"

namespace runtime::v1 {
class CreateContainerRequest;  // cri_runtime_v1.pb.h: kept out of this header, it is heavy
}  // namespace runtime::v1

namespace qrm::shim {

class Interceptors {
 public:
  // `host` must be started before the first call (its writer re-sends qrm's fields when
  // they change during a kubelet update).
  Interceptors(const ShimOptions& options, host::Host& host, RuntimeIndex& index,
               ShimCounters& counters);

  // Handles an intercepted method other than RunPodSandbox. May block: runs on the pool.
  Answer Handle(Intercept kind, InterceptedCall& call);

  // Containers created through the shim and not yet started or removed (tests: bounded).
  size_t created_not_started() const;
  // For a RunPodSandbox, CreateContainer, StartContainer or UpdateContainerResources request
  // that did not decode: the refusal, or nothing if the pod is skipped (then the caller
  // forwards the request untouched). Never blocks.
  std::optional<Answer> RefuseUndecodable(Intercept kind, const InterceptedCall& call);
  // Records the sandbox a successful RunPodSandbox (`call`, answered with `response`)
  // created. Never blocks.
  void RecordSandbox(const InterceptedCall& call, const grpc::ByteBuffer& response);

 private:
  Answer CreateContainer(InterceptedCall& call, PhaseClock& clock);
  // After the runtime answered an admitted CreateContainer: tracks the new container (and
  // sends it values that changed meanwhile), or releases the admission the runtime refused.
  Answer RecordCreate(const ::runtime::v1::CreateContainerRequest& request, const ContainerKey& key,
                      const PodRef& ref, uint64_t sent_fingerprint, Answer answer,
                      PhaseClock& clock);
  Answer StartContainer(InterceptedCall& call, PhaseClock& clock);
  Answer RemoveContainer(InterceptedCall& call, PhaseClock& clock);
  Answer StopOrRemovePodSandbox(InterceptedCall& call, bool remove, PhaseClock& clock);
  Answer UpdateContainerResources(InterceptedCall& call, PhaseClock& clock);
  // Applies qrm's current values for `key` if they differ from `sent` (the Fingerprint of the
  // values a call that just finished carried); `when` completes the log line. Returns the
  // fingerprint of the values the container has now as far as qrm knows (the newest if
  // applied, else `sent`).
  uint64_t ReapplyIfChanged(const ContainerKey& key, uint64_t sent, const char* when);
  std::optional<uint64_t> TakeCreatedWith(const std::string& container_id);
  void ForgetCreatedIn(const std::string& sandbox_id);
  // Forwards `request` (the original or an edited one); the time until the runtime answers
  // is the runtime phase, what went before it the phase `before`.
  Answer Forward(InterceptedCall& call, const grpc::ByteBuffer& request, PhaseClock& clock,
                 Phase before = Phase::kDecode);
  // Releases the pod unless it still has a ready sandbox; called under the pod lock.
  void ReleasePodIfGone(const std::string& pod_uid, const std::string& sandbox_id);

  const ShimOptions& options_;
  host::Host& host_;
  RuntimeIndex& index_;
  ShimCounters& counters_;
  // The shim's own per-pod locks (Admission locks its own per call; sharing them would
  // deadlock, since the shim calls Admission while holding the pod).
  PodLocks pod_locks_;
  CallPhases phases_{metrics::Default()};
  // The owned values each created, not yet started container got. containerd reads the spec
  // when StartContainer begins, so an update it accepts while the start is in progress only
  // changes the stored spec, not the new task's cgroup: StartContainer re-applies if qrm's
  // values moved meanwhile. Fingerprints, not the updates: a node can hold many created
  // containers, and 8 bytes each is all the comparison needs.
  struct CreatedWith {
    uint64_t fingerprint = 0;
    std::string sandbox_id;  // a sandbox removed with its containers forgets them too
  };
  mutable Mutex created_mu_;
  std::map<std::string, CreatedWith> created_with_ QRM_GUARDED_BY(created_mu_);  // by container id
};

}  // namespace qrm::shim
