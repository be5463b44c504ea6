#include "cri-shim/runtime_access.h"

#include <map>

#include <fmt/format.h>

#include "common/grpc_status.h"
#include "cri-shim/pod_info.h"
#include "qrm/apply/cri_request_edit.h"

namespace qrm::shim {
namespace {

namespace cri = ::runtime::v1;

Status NotReady() {
  return UnavailableError("the CRI shim has not synchronized with the runtime yet");
}

std::unique_ptr<grpc::ClientContext> Context(std::chrono::milliseconds timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + timeout);
  return context;
}

}  // namespace

Status ShimApplier::Apply(const std::string& pod_uid, const std::string& container,
                          const apply::ContainerUpdate& update) {
  counters_.applier_updates.fetch_add(1, std::memory_order_relaxed);
  auto fail = [this](Status s) {
    counters_.applier_failures.fetch_add(1, std::memory_order_relaxed);
    return s;
  };
  RuntimeChannels* channels = channels_.load();
  if (channels == nullptr) return fail(NotReady());
  auto id = index_.NewestContainerId({pod_uid, container});
  if (!id) {
    return fail(NotFoundError(fmt::format(
        "pod={} container={}: no such container in the runtime (yet)", pod_uid, container)));
  }
  const cri::UpdateContainerResourcesRequest request = apply::UpdateRequestFor(*id, update);
  cri::UpdateContainerResourcesResponse response;
  const grpc::Status s = channels->runtime().UpdateContainerResources(
      Context(options_.runtime_timeout).get(), request, &response);
  if (!s.ok()) {
    return fail(FromGrpcStatus(s).WithContext(fmt::format(
        "UpdateContainerResources of pod={} container={} ({})", pod_uid, container, *id)));
  }
  return Status::Ok();
}

StatusOr<std::set<std::string>> ShimView::ListPodUids() {
  RuntimeChannels* channels = channels_.load();
  if (channels == nullptr) return NotReady();
  cri::ListPodSandboxRequest request;
  request.mutable_filter()->mutable_state()->set_state(cri::SANDBOX_READY);
  cri::ListPodSandboxResponse response;
  const grpc::Status s = channels->runtime().ListPodSandbox(Context(options_.runtime_timeout).get(),
                                                            request, &response);
  if (!s.ok()) return FromGrpcStatus(s).WithContext("ListPodSandbox");
  std::set<std::string> uids;
  for (const auto& sandbox : response.items()) {
    const std::string uid = PodInfoFromListedSandbox(sandbox).uid;
    if (sandbox.state() == cri::SANDBOX_READY && !uid.empty()) uids.insert(uid);
  }
  return uids;
}

StatusOr<std::vector<reconcile::RuntimeContainer>> ShimView::ListContainers() {
  RuntimeChannels* channels = channels_.load();
  if (channels == nullptr) return NotReady();
  cri::ListPodSandboxRequest sandboxes_request;
  sandboxes_request.mutable_filter()->mutable_state()->set_state(cri::SANDBOX_READY);
  cri::ListPodSandboxResponse sandboxes;
  grpc::Status s = channels->runtime().ListPodSandbox(Context(options_.runtime_timeout).get(),
                                                      sandboxes_request, &sandboxes);
  if (!s.ok()) return FromGrpcStatus(s).WithContext("ListPodSandbox");
  std::map<std::string, PodInfo> ready;  // by sandbox id
  for (const auto& sandbox : sandboxes.items()) {
    PodInfo pod = PodInfoFromListedSandbox(sandbox);
    if (sandbox.state() == cri::SANDBOX_READY && !pod.uid.empty()) ready[sandbox.id()] = pod;
  }
  cri::ListContainersRequest request;
  cri::ListContainersResponse response;
  s = channels->runtime().ListContainers(Context(options_.runtime_timeout).get(), request,
                                         &response);
  if (!s.ok()) return FromGrpcStatus(s).WithContext("ListContainers");
  std::vector<reconcile::RuntimeContainer> out;
  for (const auto& c : response.containers()) {
    auto pod = ready.find(c.pod_sandbox_id());
    if (pod == ready.end() || c.metadata().name().empty()) continue;
    out.push_back({pod->second.uid, pod->second.name, pod->second.ns, c.metadata().name()});
  }
  return out;
}

}  // namespace qrm::shim
