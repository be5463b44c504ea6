#include "qrm/podresources/pod_resources_server.h"

#include <atomic>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include "api/podresources_v1.grpc.pb.h"
#include "common/grpc_status.h"
#include "common/log.h"
#include "common/unix_socket.h"
#include "qrm/podresources/active_pods.h"
#include "qrm/podresources/rate_limiter.h"

namespace qrm::podresources {

class PodResourcesServer::Service final : public ::v1::PodResourcesLister::Service {
 public:
  Service(const PodResourcesOptions& options, const state::StateStore& state,
          AllocatableSource allocatable, reconcile::RuntimeView* runtime)
      : options_(options),
        state_(state),
        allocatable_(std::move(allocatable)),
        runtime_(runtime),
        limiter_(options.qps, options.burst) {}

  grpc::Status List(grpc::ServerContext*, const ::v1::ListPodResourcesRequest*,
                    ::v1::ListPodResourcesResponse* response) override {
    if (!limiter_.TryAcquire()) return Limited("List");
    for (::v1::PodResources& pod : Active()) *response->add_pod_resources() = std::move(pod);
    return grpc::Status::OK;
  }

  grpc::Status Get(grpc::ServerContext*, const ::v1::GetPodResourcesRequest* request,
                   ::v1::GetPodResourcesResponse* response) override {
    if (!limiter_.TryAcquire()) return Limited("Get");
    for (::v1::PodResources& pod : Active()) {
      if (pod.name() == request->pod_name() && pod.namespace_() == request->pod_namespace()) {
        *response->mutable_pod_resources() = std::move(pod);
        return grpc::Status::OK;
      }
    }
    // The kubelet returns a plain error here, which gRPC-Go sends as UNKNOWN; clients written
    // against it test for that code.
    return grpc::Status(grpc::StatusCode::UNKNOWN,
                        fmt::format("pod {} in namespace {} not found", request->pod_name(),
                                    request->pod_namespace()));
  }

  grpc::Status GetAllocatableResources(grpc::ServerContext*,
                                       const ::v1::AllocatableResourcesRequest*,
                                       ::v1::AllocatableResourcesResponse* response) override {
    if (!limiter_.TryAcquire()) return Limited("GetAllocatableResources");
    *response = ToAllocatable(allocatable_(), options_.mapping);
    return grpc::Status::OK;
  }

 private:
  std::vector<::v1::PodResources> Active() {
    std::vector<reconcile::RuntimeContainer> live;
    if (runtime_ != nullptr) {
      StatusOr<std::vector<reconcile::RuntimeContainer>> listed = runtime_->ListContainers();
      if (listed.ok()) {
        live = std::move(*listed);
        runtime_warned_.store(false, std::memory_order_relaxed);
      } else if (!runtime_warned_.exchange(true, std::memory_order_relaxed)) {
        // Once per outage: every List would repeat it.
        log_->warn("runtime containers unavailable, answering from the checkpoint alone: {}",
                   listed.status().ToString());
      }
    }
    return ActivePodResources(state_.Snapshot(), live, options_.mapping);
  }

  grpc::Status Limited(const char* method) {
    log_->debug("method={}: rate limit of {} requests/s (burst {}) exceeded", method, options_.qps,
                options_.burst);
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        fmt::format("pod-resources: rate limit of {} requests/s exceeded, retry "
                                    "later",
                                    options_.qps));
  }

  const PodResourcesOptions& options_;
  const state::StateStore& state_;
  AllocatableSource allocatable_;
  reconcile::RuntimeView* runtime_;
  std::atomic<bool> runtime_warned_{false};
  TokenBucket limiter_;
  std::shared_ptr<spdlog::logger> log_ = Logger("pod-resources");
};

PodResourcesServer::PodResourcesServer(PodResourcesOptions options, const state::StateStore& state,
                                       AllocatableSource allocatable,
                                       reconcile::RuntimeView* runtime)
    : options_(std::move(options)),
      service_(std::make_unique<Service>(options_, state, std::move(allocatable), runtime)) {}

PodResourcesServer::~PodResourcesServer() {
  Stop();
}

Status PodResourcesServer::Start() {
  QRM_RETURN_IF_ERROR(PrepareSocketPath(options_.socket, options_.permissions));
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + options_.socket, grpc::InsecureServerCredentials());
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (!server_) {
    return UnavailableError(fmt::format("pod-resources: cannot listen on {}", options_.socket));
  }
  QRM_RETURN_IF_ERROR(ApplySocketPermissions(options_.socket, options_.permissions));
  Logger("pod-resources")->info("serving podresources v1 on {}", options_.socket);
  return Status::Ok();
}

void PodResourcesServer::Stop() {
  if (!server_) return;
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  server_.reset();
  ::unlink(options_.socket.c_str());
}

}  // namespace qrm::podresources
