#include "bench/cri_shim/grpc_hop_floor.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include "api/cri_runtime_v1.grpc.pb.h"

namespace qrm::bench {
namespace {

class VersionOnly final : public ::runtime::v1::RuntimeService::CallbackService {
  grpc::ServerUnaryReactor* Version(grpc::CallbackServerContext* context,
                                    const ::runtime::v1::VersionRequest* /*request*/,
                                    ::runtime::v1::VersionResponse* response) override {
    response->set_version("0.1.0");
    response->set_runtime_name("floor");
    response->set_runtime_version("1");
    response->set_runtime_api_version("v1");
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
};

}  // namespace

struct GrpcHopFloor::Server {
  VersionOnly service;
  std::unique_ptr<grpc::Server> server;
};

GrpcHopFloor::GrpcHopFloor(const std::string& socket_path)
    : socket_path_(socket_path), server_(std::make_unique<Server>()) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix://" + socket_path_, grpc::InsecureServerCredentials());
  builder.RegisterService(&server_->service);
  server_->server = builder.BuildAndStart();
}

GrpcHopFloor::~GrpcHopFloor() {
  if (server_->server) server_->server->Shutdown();
}

}  // namespace qrm::bench
