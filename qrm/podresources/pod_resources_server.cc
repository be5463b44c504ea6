#include "qrm/podresources/pod_resources_server.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include "api/podresources_v1.grpc.pb.h"
#include "common/grpc_status.h"
#include "common/log.h"
#include "common/unix_socket.h"
#include "qrm/podresources/rate_limiter.h"

namespace qrm::host {

class PodResourcesServer::Service final : public ::v1::PodResourcesLister::Service {
 public:
  Service(const PodResourcesOptions& options, const StateStore& state,
          AllocatableSource allocatable)
      : options_(options),
        state_(state),
        allocatable_(std::move(allocatable)),
        limiter_(options.qps, options.burst) {}

  grpc::Status List(grpc::ServerContext*, const ::v1::ListPodResourcesRequest*,
                    ::v1::ListPodResourcesResponse* response) override {
    if (!limiter_.TryAcquire()) return Limited("List");
    for (const auto& [uid, pod] : state_.Snapshot()) {
      if (pod) *response->add_pod_resources() = ToPodResources(*pod, options_.mapping);
    }
    return grpc::Status::OK;
  }

  grpc::Status Get(grpc::ServerContext*, const ::v1::GetPodResourcesRequest* request,
                   ::v1::GetPodResourcesResponse* response) override {
    if (!limiter_.TryAcquire()) return Limited("Get");
    if (request->pod_name().empty()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "pod_name: must not be empty");
    }
    for (const auto& [uid, pod] : state_.Snapshot()) {
      if (pod && pod->name == request->pod_name() && pod->ns == request->pod_namespace()) {
        *response->mutable_pod_resources() = ToPodResources(*pod, options_.mapping);
        return grpc::Status::OK;
      }
    }
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        fmt::format("pod {}/{} has no allocations in qrm (unknown pod, or it "
                                    "requested nothing qrm manages)",
                                    request->pod_namespace(), request->pod_name()));
  }

  grpc::Status GetAllocatableResources(grpc::ServerContext*,
                                       const ::v1::AllocatableResourcesRequest*,
                                       ::v1::AllocatableResourcesResponse* response) override {
    if (!limiter_.TryAcquire()) return Limited("GetAllocatableResources");
    *response = ToAllocatable(allocatable_(), options_.mapping);
    return grpc::Status::OK;
  }

 private:
  grpc::Status Limited(const char* method) {
    log_->debug("method={}: rate limit of {} requests/s (burst {}) exceeded", method, options_.qps,
                options_.burst);
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        fmt::format("pod-resources: rate limit of {} requests/s exceeded, retry "
                                    "later",
                                    options_.qps));
  }

  const PodResourcesOptions& options_;
  const StateStore& state_;
  AllocatableSource allocatable_;
  TokenBucket limiter_;
  std::shared_ptr<spdlog::logger> log_ = Logger("pod-resources");
};

PodResourcesServer::PodResourcesServer(PodResourcesOptions options, const StateStore& state,
                                       AllocatableSource allocatable)
    : options_(std::move(options)),
      service_(std::make_unique<Service>(options_, state, std::move(allocatable))) {}

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

}  // namespace qrm::host
