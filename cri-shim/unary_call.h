// UnaryCall: the server side of one unary CRI call (a method our .proto declares unary),
// served through a raw (ByteBuffer) callback handler: the request arrives with the call and
// the answer leaves with the status, one batch each way.
//
// Pass-through: the request bytes go to the runtime with the generic stub's callback API
// and the runtime's bytes, status and metadata come back; nothing is decoded, no lock is
// taken, and no thread ever waits. Intercepted methods hand the call to Interceptors:
// RunPodSandbox is forwarded the same non-blocking way and recorded on the way back; the
// others run on the shim's pool (they may wait for admission and the runtime).
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include <grpcpp/support/server_callback.h>

#include "cri-shim/intercepted_call.h"
#include "cri-shim/proxy_deps.h"

namespace qrm::shim {

class UnaryCall final : public grpc::ServerUnaryReactor, public InterceptedCall {
 public:
  // Starts handling at once; deletes itself when the call is done.
  // `request` and `response` belong to gRPC and live until then; `counters` are the method's.
  UnaryCall(grpc::CallbackServerContext* context, const MethodInfo& method,
            MethodCounters& counters, ProxyDeps& deps, const grpc::ByteBuffer* request,
            grpc::ByteBuffer* response);

  void OnDone() override;

  const grpc::ByteBuffer& request() const override { return *request_; }
  std::chrono::steady_clock::time_point received() const override { return started_; }
  grpc::Status Forward(const grpc::ByteBuffer& request, grpc::ByteBuffer* response) override;

 private:
  // Forwards the request without waiting; `done` runs on a gRPC thread with the response
  // in place.
  void ForwardAsync(std::function<void(const grpc::Status&)> done);
  // Answers a call whose request message never arrived (see the constructor).
  void RefuseMissingRequest();
  void PassThrough();
  void RecordSandbox();
  void RunOnPool();
  // Answers the kubelet (the response, if OK, is already in place). Nothing may touch
  // `this` afterwards: OnDone may already run.
  void Reply(grpc::Status status);

  grpc::CallbackServerContext* const context_;
  const MethodInfo& method_;
  ProxyDeps& deps_;
  MethodCounters& counters_;
  const grpc::ByteBuffer* const request_;
  grpc::ByteBuffer* const response_;
  std::unique_ptr<grpc::ClientContext> client_context_;
  const std::chrono::steady_clock::time_point started_;
};

}  // namespace qrm::shim
