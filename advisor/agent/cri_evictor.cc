#include "advisor/agent/cri_evictor.h"

#include <grpcpp/grpcpp.h>

#include "advisor/discover/container_directory.h"
#include "common/protocol_keys.h"

namespace qrm::advisor {
namespace cri = ::runtime::v1;

CriEvictor::CriEvictor(const std::string& endpoint, std::chrono::milliseconds timeout)
    : stub_(cri::RuntimeService::NewStub(RuntimeChannel(endpoint))),
      timeout_(timeout),
      log_(Logger("guard")) {}

guard::EvictOutcome CriEvictor::Evict(const guard::GuardCandidate& pod) {
  cri::ListPodSandboxRequest list;
  list.mutable_filter()->mutable_state()->set_state(cri::SANDBOX_READY);
  (*list.mutable_filter()->mutable_label_selector())[kPodUidLabel] = pod.pod_uid;
  cri::ListPodSandboxResponse sandboxes;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + timeout_);
    if (grpc::Status s = stub_->ListPodSandbox(&ctx, list, &sandboxes); !s.ok()) {
      log_->error("pod={} uid={}: cri eviction: ListPodSandbox failed: {}", pod.Key(), pod.pod_uid,
                  s.error_message());
      return guard::EvictOutcome::kError;
    }
  }
  if (sandboxes.items_size() == 0) return guard::EvictOutcome::kGone;
  for (const cri::PodSandbox& sandbox : sandboxes.items()) {
    cri::StopPodSandboxRequest stop;
    stop.set_pod_sandbox_id(sandbox.id());
    cri::StopPodSandboxResponse answer;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + timeout_);
    if (grpc::Status s = stub_->StopPodSandbox(&ctx, stop, &answer); !s.ok()) {
      log_->error("pod={} uid={}: cri eviction: StopPodSandbox {} failed: {}", pod.Key(),
                  pod.pod_uid, sandbox.id(), s.error_message());
      return guard::EvictOutcome::kError;
    }
    log_->warn("pod={} uid={}: stopped its sandbox {} through the CRI (not a Kubernetes eviction)",
               pod.Key(), pod.pod_uid, sandbox.id());
  }
  return guard::EvictOutcome::kEvicted;
}

}  // namespace qrm::advisor
