#include "cri-shim/interceptors.h"

#include <set>

#include <fmt/format.h>

#include "common/grpc_status.h"
#include "common/log.h"
#include "cri-shim/byte_buffer.h"
#include "cri-shim/container_request_builder.h"
#include "cri-shim/lenient_decode.h"
#include "cri-shim/refusals.h"
#include "cri-shim/skip_rules.h"
#include "qrm/apply/cri_request_edit.h"

namespace qrm::shim {
namespace {

namespace cri = ::runtime::v1;

PodRef Ref(const PodInfo& pod, const std::string& container = "") {
  return {pod.uid, pod.ns, pod.name, container};
}

Answer Error(const Status& status) {
  return Answer{ToGrpcStatus(status), {}};
}

// An admission-side refusal (admission, PreStartContainer, a bad skip annotation): counted
// (as `internal` when qrm itself failed, e.g. a checkpoint write) and answered with the
// status's own code. The caller has logged it with the pod.
Answer Refusal(const char* method, const Status& status) {
  CountRefusal(method, status.code() == StatusCode::kInternal ? RefusalReason::kInternal
                                                              : RefusalReason::kAdmission);
  return Error(status);
}

std::string Describe(const PodInfo& pod, const std::string& container = "") {
  if (pod.uid.empty() && pod.name.empty()) return "";
  return fmt::format("{}", PodRef{pod.uid, pod.ns, pod.name, container});
}

// The pod as CreateContainer describes it, completed from what RunPodSandbox recorded
// (a caller may send no sandbox_config; the runtime handler is only in RunPodSandbox).
PodInfo PodOf(const cri::CreateContainerRequest& request, const RuntimeIndex& index) {
  PodInfo pod = PodInfoFromSandboxConfig(request.sandbox_config());
  if (auto recorded = index.FindSandbox(request.pod_sandbox_id())) {
    const PodInfo& known = recorded->pod;
    if (pod.uid.empty()) pod.uid = known.uid;
    if (pod.name.empty()) pod.name = known.name;
    if (pod.ns.empty()) pod.ns = known.ns;
    if (pod.labels.empty()) pod.labels = known.labels;
    if (pod.annotations.empty()) pod.annotations = known.annotations;
    pod.runtime_handler = known.runtime_handler;
  }
  return pod;
}

}  // namespace

std::optional<Answer> Interceptors::RefuseUndecodable(Intercept kind, const InterceptedCall& call) {
  const char* method = "";
  PodInfo pod;
  std::string container;
  const google::protobuf::Descriptor* type = nullptr;
  switch (kind) {
    case Intercept::kRunPodSandbox: {
      cri::RunPodSandboxRequest partial;
      LenientParse(call.request(), &partial);
      pod = PodInfoFromSandboxConfig(partial.config());
      method = "RunPodSandbox";
      type = cri::RunPodSandboxRequest::descriptor();
      break;
    }
    case Intercept::kCreateContainer: {
      cri::CreateContainerRequest partial;
      LenientParse(call.request(), &partial);
      pod = PodOf(partial, index_);
      container = partial.config().metadata().name();
      method = "CreateContainer";
      type = cri::CreateContainerRequest::descriptor();
      break;
    }
    default: {
      // StartContainer, UpdateContainerResources: container_id = 1 in both.
      cri::StartContainerRequest partial;
      LenientParse(call.request(), &partial);
      if (auto known = index_.FindContainer(partial.container_id())) {
        if (auto sandbox = index_.FindSandbox(known->sandbox_id)) pod = sandbox->pod;
        container = known->key.name;
      }
      method = kind == Intercept::kStartContainer ? "StartContainer" : "UpdateContainerResources";
      type = kind == Intercept::kStartContainer
                 ? cri::StartContainerRequest::descriptor()
                 : cri::UpdateContainerResourcesRequest::descriptor();
      break;
    }
  }
  // Only a pod known to be skipped passes; an unknown or badly annotated pod is refused.
  auto skip = ShouldSkip(pod, options_.skip_namespaces);
  if (skip.ok() && *skip) {
    Logger("cri-shim")
        ->debug("{}: {} does not decode; skipped pod, passing through", Describe(pod, container),
                method);
    return std::nullopt;
  }
  const grpc::Status status(grpc::StatusCode::INVALID_ARGUMENT,
                            fmt::format("qrm: {} request cannot be decoded: {}", method,
                                        DecodeError(*type, call.request())));
  return Answer{Refused(method, RefusalReason::kUndecodable, Describe(pod, container), status), {}};
}

Interceptors::Interceptors(const ShimOptions& options, host::Host& host, RuntimeIndex& index,
                           ShimCounters& counters)
    : options_(options), host_(host), index_(index), counters_(counters) {}

Answer Interceptors::Handle(Intercept kind, InterceptedCall& call) {
  PhaseClock clock(phases_, kind, call.received());
  clock.Lap(Phase::kQueued);
  switch (kind) {
    case Intercept::kCreateContainer: return CreateContainer(call, clock);
    case Intercept::kStartContainer: return StartContainer(call, clock);
    case Intercept::kRemoveContainer: return RemoveContainer(call, clock);
    case Intercept::kStopPodSandbox: return StopOrRemovePodSandbox(call, false, clock);
    case Intercept::kRemovePodSandbox: return StopOrRemovePodSandbox(call, true, clock);
    case Intercept::kUpdateContainerResources: return UpdateContainerResources(call, clock);
    case Intercept::kRunPodSandbox:  // handled without the pool; forwarded if it gets here
    case Intercept::kPassThrough: break;
  }
  return Forward(call, call.request(), clock);
}

Answer Interceptors::Forward(InterceptedCall& call, const grpc::ByteBuffer& request,
                             PhaseClock& clock, Phase before) {
  clock.Lap(before);
  Answer answer;
  answer.status = call.Forward(request, &answer.response);
  clock.Lap(Phase::kRuntime);
  return answer;
}

void Interceptors::RecordSandbox(const InterceptedCall& call, const grpc::ByteBuffer& response) {
  PhaseClock clock(phases_, Intercept::kRunPodSandbox, call.received());
  clock.Lap(Phase::kRuntime);  // forwarded without decoding: all of it was the runtime's
  cri::RunPodSandboxRequest req;
  cri::RunPodSandboxResponse resp;
  if (!ParseByteBuffer(call.request(), &req) || !ParseByteBuffer(response, &resp) ||
      resp.pod_sandbox_id().empty()) {
    Logger("cri-shim")->warn("RunPodSandbox: cannot decode the call; sandbox not recorded");
    return;
  }
  PodInfo pod = PodInfoFromSandboxConfig(req.config());
  pod.runtime_handler = req.runtime_handler();
  Logger("cri-shim")->debug("{}: sandbox {} started", Ref(pod), resp.pod_sandbox_id());
  index_.AddSandbox(resp.pod_sandbox_id(), std::move(pod));
  clock.Lap(Phase::kRecord);
}

Answer Interceptors::CreateContainer(InterceptedCall& call, PhaseClock& clock) {
  auto log = Logger("cri-shim");
  cri::CreateContainerRequest request;
  if (!ParseByteBuffer(call.request(), &request)) {
    if (auto refused = RefuseUndecodable(Intercept::kCreateContainer, call)) return *refused;
    return Forward(call, call.request(), clock);
  }
  const PodInfo pod = PodOf(request, index_);
  auto skip = ShouldSkip(pod, options_.skip_namespaces);
  if (!skip.ok()) {
    log->warn("{}: CreateContainer refused: {}", Ref(pod), skip.status().message());
    return Refusal("CreateContainer", skip.status().WithContext("qrm"));
  }
  if (*skip) {
    log->debug("{}: skipped by configuration, passing through", Ref(pod));
    return Forward(call, call.request(), clock);
  }
  auto container = BuildContainerRequest(request, pod);
  if (!container.ok()) {
    log->warn("{}: CreateContainer refused: {}", Ref(pod), container.status().message());
    return Refusal("CreateContainer", container.status().WithContext("qrm"));
  }
  const ContainerKey key{container->pod_uid, container->container_name};
  const PodRef ref = Ref(pod, key.name);
  if (!index_.FindSandbox(request.pod_sandbox_id())) {
    index_.AddSandbox(request.pod_sandbox_id(), pod);  // started before qrm could see it
  }

  clock.Lap(Phase::kDecode);

  StatusOr<admission::AdmissionResult> admitted = InternalError("not admitted");
  {
    auto lock = pod_locks_.Lock(key.pod_uid);
    admitted = host_.admission().Admit(*container);
    if (admitted.ok()) index_.BeginCreate(key);
  }
  clock.Lap(Phase::kAdmission);
  if (!admitted.ok()) {
    counters_.admission_failures.fetch_add(1, std::memory_order_relaxed);
    log->error("{}: admission refused: {}", ref, admitted.status().message());
    return Refusal("CreateContainer",
                   admitted.status().WithContext(fmt::format("qrm admission of {}", ref)));
  }

  Answer answer;
  if (apply::HasEffect(admitted->update)) {
    apply::ApplyToCreateContainer(admitted->update, &request);
    answer = Forward(call, SerializeToByteBuffer(request), clock, Phase::kEncode);
  } else {
    answer = Forward(call, call.request(), clock, Phase::kEncode);
  }

  return RecordCreate(request, key, ref, apply::Fingerprint(admitted->update), std::move(answer),
                      clock);
}

Answer Interceptors::RecordCreate(const cri::CreateContainerRequest& request,
                                  const ContainerKey& key, const PodRef& ref,
                                  uint64_t sent_fingerprint, Answer answer, PhaseClock& clock) {
  auto log = Logger("cri-shim");
  cri::CreateContainerResponse response;
  const bool created = answer.status.ok() && ParseByteBuffer(answer.response, &response) &&
                       !response.container_id().empty();
  if (answer.status.ok() && !created) {
    log->warn("{}: CreateContainer response carries no container id; not tracked", ref);
  }
  if (created) {
    const RuntimeIndex::Container c{response.container_id(), request.pod_sandbox_id(), key};
    {
      auto lock = pod_locks_.Lock(key.pod_uid);
      index_.EndCreate(key, &c);
    }
    log->info("{}: created {} with qrm's allocation", ref, c.id);
    // A reconcile tick may have changed this container's values (say, a dedicated admission
    // shrank the shared pool) while the create was in flight; its update found no container
    // to apply to. Send the newest values now, so the new container never keeps stale CPUs.
    const uint64_t has =
        ReapplyIfChanged(key, sent_fingerprint, "while its CreateContainer was in flight");
    {
      MutexLock created_lock(created_mu_);
      created_with_[c.id] = {has, request.pod_sandbox_id()};
    }
    clock.Lap(Phase::kRecord);
    return answer;
  }
  auto lock = pod_locks_.Lock(key.pod_uid);
  index_.EndCreate(key, nullptr);
  if (!answer.status.ok() && !index_.InUse(key)) {
    counters_.rollbacks.fetch_add(1, std::memory_order_relaxed);
    log->warn("{}: the runtime refused CreateContainer ({}); releasing the admission", ref,
              answer.status.error_message());
    if (Status s = host_.admission().ReleaseContainer(key.pod_uid, key.name); !s.ok()) {
      log->error("{}: release after a failed CreateContainer failed: {}", ref, s.message());
    }
  }
  clock.Lap(Phase::kRecord);
  return answer;
}

Answer Interceptors::StartContainer(InterceptedCall& call, PhaseClock& clock) {
  cri::StartContainerRequest request;
  if (!ParseByteBuffer(call.request(), &request)) {
    if (auto refused = RefuseUndecodable(Intercept::kStartContainer, call)) return *refused;
    return Forward(call, call.request(), clock);
  }
  auto container = index_.FindContainer(request.container_id());
  if (!container) return Forward(call, call.request(), clock);
  auto stored = host_.state().GetContainer(container->key.pod_uid, container->key.name);
  if (!stored) return Forward(call, call.request(), clock);
  clock.Lap(Phase::kDecode);

  ::resourceplugin::v1alpha1::PreStartContainerRequest pre_start;
  pre_start.set_pod_uid(container->key.pod_uid);
  pre_start.set_pod_namespace(stored->request.pod_namespace());
  pre_start.set_pod_name(stored->request.pod_name());
  pre_start.set_container_name(container->key.name);
  const PodRef ref{container->key.pod_uid, stored->request.pod_namespace(),
                   stored->request.pod_name(), container->key.name};
  std::set<const registry::PluginEndpoint*> called;
  for (const auto& [resource, info] : stored->resources) {
    auto endpoint = host_.registry().Find(resource);
    if (!endpoint || !endpoint->options().pre_start_required()) continue;
    if (!called.insert(endpoint.get()).second) continue;
    Status s = endpoint->PreStartContainer(pre_start, options_.pre_start_timeout);
    if (!s.ok()) {
      Logger("cri-shim")
          ->error("{}: PreStartContainer on the {} plugin failed: {}", ref, resource, s.message());
      return Refusal("StartContainer",
                     s.WithContext(fmt::format("qrm: PreStartContainer of {} on the {} plugin", ref,
                                               resource)));
    }
  }
  Answer answer = Forward(call, call.request(), clock, Phase::kPreStart);
  if (answer.status.ok()) {
    if (auto created = TakeCreatedWith(request.container_id())) {
      ReapplyIfChanged(container->key, *created, "while the container was starting");
    }
  }
  return answer;
}

Answer Interceptors::RemoveContainer(InterceptedCall& call, PhaseClock& clock) {
  cri::RemoveContainerRequest request;
  if (!ParseByteBuffer(call.request(), &request)) return Forward(call, call.request(), clock);
  Answer answer = Forward(call, call.request(), clock);
  if (!answer.status.ok()) return answer;
  (void)TakeCreatedWith(request.container_id());
  auto container = index_.FindContainer(request.container_id());
  if (!container) return answer;
  auto lock = pod_locks_.Lock(container->key.pod_uid);
  if (auto released = index_.RemoveContainer(request.container_id())) {
    if (host_.state().GetContainer(released->pod_uid, released->name)) {
      counters_.releases.fetch_add(1, std::memory_order_relaxed);
      Status s = host_.admission().RemoveContainer(released->pod_uid, released->name);
      if (!s.ok()) {
        Logger("cri-shim")
            ->error("pod={} container={}: release after RemoveContainer failed: {}",
                    released->pod_uid, released->name, s.message());
      }
    }
  }
  clock.Lap(Phase::kRecord);
  return answer;
}

Answer Interceptors::StopOrRemovePodSandbox(InterceptedCall& call, bool remove, PhaseClock& clock) {
  // Both requests carry only pod_sandbox_id = 1.
  cri::StopPodSandboxRequest request;
  if (!ParseByteBuffer(call.request(), &request)) return Forward(call, call.request(), clock);
  auto sandbox = index_.FindSandbox(request.pod_sandbox_id());
  if (!sandbox || sandbox->pod.uid.empty()) return Forward(call, call.request(), clock);
  // This call owns the pod's release until it returns: the runtime lists the sandbox as not
  // ready while the stop is in flight, and the reconcile loop must not release the pod
  // before the runtime confirmed (release_claims.h).
  const auto claim = host_.reconciler().release_claims().Hold(sandbox->pod.uid);
  Answer answer = Forward(call, call.request(), clock);
  if (!answer.status.ok()) return answer;
  auto lock = pod_locks_.Lock(sandbox->pod.uid);
  if (remove) {
    index_.RemoveSandbox(request.pod_sandbox_id());
    ForgetCreatedIn(request.pod_sandbox_id());
  } else {
    index_.MarkSandboxNotReady(request.pod_sandbox_id());
  }
  ReleasePodIfGone(sandbox->pod.uid, request.pod_sandbox_id());
  clock.Lap(Phase::kRecord);
  return answer;
}

void Interceptors::ReleasePodIfGone(const std::string& pod_uid, const std::string& sandbox_id) {
  if (index_.HasOtherReadySandbox(pod_uid, sandbox_id)) return;
  if (!host_.state().GetPod(pod_uid)) return;  // never admitted, or already released
  counters_.releases.fetch_add(1, std::memory_order_relaxed);
  if (Status s = host_.admission().RemovePod(pod_uid); !s.ok()) {
    // The pod stays in the checkpoint; reconcile's garbage collection retries.
    Logger("cri-shim")
        ->error("pod={}: release after its sandbox {} stopped failed: {}", pod_uid, sandbox_id,
                s.message());
  }
}

std::optional<uint64_t> Interceptors::TakeCreatedWith(const std::string& container_id) {
  MutexLock lock(created_mu_);
  auto it = created_with_.find(container_id);
  if (it == created_with_.end()) return std::nullopt;
  const uint64_t sent = it->second.fingerprint;
  created_with_.erase(it);
  return sent;
}

void Interceptors::ForgetCreatedIn(const std::string& sandbox_id) {
  // Containers created but never started, then removed with their sandbox (no
  // RemoveContainer of their own): nothing will start them any more.
  MutexLock lock(created_mu_);
  std::erase_if(created_with_,
                [&](const auto& entry) { return entry.second.sandbox_id == sandbox_id; });
}

size_t Interceptors::created_not_started() const {
  MutexLock lock(created_mu_);
  return created_with_.size();
}

uint64_t Interceptors::ReapplyIfChanged(const ContainerKey& key, uint64_t sent, const char* when) {
  uint64_t now_fingerprint = sent;
  bool changed = false;
  // Through the host's writer: a reconcile write or a throttle push of newer values cannot
  // land between this read and this write.
  Status s = host_.reconciler().writer().WriteCurrent(key.pod_uid, key.name,
                                                      [&](const apply::ContainerUpdate& now) {
                                                        now_fingerprint = apply::Fingerprint(now);
                                                        changed = now_fingerprint != sent;
                                                        return changed;
                                                      });
  if (!changed) return sent;
  if (s.ok()) {
    Logger("cri-shim")
        ->info("pod={} container={}: qrm's fields changed {}; sent the newest", key.pod_uid,
               key.name, when);
    return now_fingerprint;
  }
  Logger("cri-shim")
      ->warn("pod={} container={}: qrm's fields changed {}; sending the newest failed: {}",
             key.pod_uid, key.name, when, s.message());
  return sent;
}

Answer Interceptors::UpdateContainerResources(InterceptedCall& call, PhaseClock& clock) {
  cri::UpdateContainerResourcesRequest request;
  if (!ParseByteBuffer(call.request(), &request)) {
    if (auto refused = RefuseUndecodable(Intercept::kUpdateContainerResources, call)) {
      return *refused;
    }
    return Forward(call, call.request(), clock);
  }
  auto container = index_.FindContainer(request.container_id());
  if (!container) return Forward(call, call.request(), clock);
  if (request.has_linux()) {
    // An in-place resize while qrm holds the container at a CPU throttle: the kubelet's new
    // quota is what the container gets back when the throttle ends.
    const Status noted = host_.throttles().NoteKubeletLimit(
        container->key.pod_uid, container->key.name, request.linux().cpu_quota(),
        request.linux().cpu_period());
    if (!noted.ok()) {
      Logger("cri-shim")
          ->warn(
              "pod={} container={}: cannot record the kubelet's new CPU limit for the "
              "throttle's restore: {}",
              container->key.pod_uid, container->key.name, noted.message());
    }
  }
  auto current = host_.admission().CurrentUpdate(container->key.pod_uid, container->key.name);
  if (!current.ok() || current->owned.empty()) return Forward(call, call.request(), clock);
  clock.Lap(Phase::kDecode);
  apply::ApplyToUpdateContainerResources(*current, &request);
  Answer answer = Forward(call, SerializeToByteBuffer(request), clock, Phase::kEncode);
  // The reconcile loop may have changed qrm's values while this was in flight, and its own
  // update may have reached the runtime before this one: send the newest values again.
  if (answer.status.ok()) {
    ReapplyIfChanged(container->key, apply::Fingerprint(*current), "during the kubelet's update");
  }
  clock.Lap(Phase::kRecord);
  return answer;
}

}  // namespace qrm::shim
