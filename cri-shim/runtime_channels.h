// RuntimeChannels: the shim's connections to the runtime and image endpoints (one channel
// when they are the same socket), with the configured message limits.
#pragma once

#include <chrono>
#include <memory>

#include <grpcpp/channel.h>
#include <grpcpp/generic/generic_stub.h>

#include "api/cri_runtime_v1.grpc.pb.h"
#include "common/status.h"
#include "cri-shim/endpoint.h"

namespace qrm::shim {

class RuntimeChannels {
 public:
  RuntimeChannels(const Endpoint& runtime, const Endpoint& image, int max_message_bytes);

  // Generic (byte) stubs for forwarding; `image_service` picks the image endpoint.
  grpc::GenericStub& generic(bool image_service) {
    return image_service ? *image_generic_ : *runtime_generic_;
  }
  // Typed stub for the shim's own calls (resync, reconcile updates).
  ::runtime::v1::RuntimeService::Stub& runtime() { return *runtime_stub_; }
  const Endpoint& runtime_endpoint() const { return runtime_endpoint_; }
  const Endpoint& image_endpoint() const { return image_endpoint_; }

  // Waits until both endpoints accept a connection; kUnavailable naming the endpoint if not
  // within `timeout`.
  Status WaitConnected(std::chrono::milliseconds timeout);

 private:
  const Endpoint runtime_endpoint_;
  const Endpoint image_endpoint_;
  std::shared_ptr<grpc::Channel> runtime_channel_;
  std::shared_ptr<grpc::Channel> image_channel_;  // == runtime_channel_ when the same socket
  std::unique_ptr<grpc::GenericStub> runtime_generic_;
  std::unique_ptr<grpc::GenericStub> image_generic_;
  std::unique_ptr<::runtime::v1::RuntimeService::Stub> runtime_stub_;
};

}  // namespace qrm::shim
