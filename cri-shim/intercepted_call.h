// InterceptedCall: what a handler of an intercepted CRI method sees of the kubelet's call.
#pragma once

#include <chrono>

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/status.h>

namespace qrm::shim {

class InterceptedCall {
 public:
  virtual ~InterceptedCall() = default;
  // The kubelet's request, as received.
  virtual const grpc::ByteBuffer& request() const = 0;
  // When the shim had read the request (the start of the call's phase timers).
  virtual std::chrono::steady_clock::time_point received() const = 0;
  // Sends `request` (the original or an edited one) to the runtime with the kubelet's
  // deadline, cancellation and metadata, and waits for the answer; the runtime's response
  // metadata is passed back to the kubelet. At most once per call, and only from a thread
  // that may block (the shim's pool, never a gRPC callback thread).
  virtual grpc::Status Forward(const grpc::ByteBuffer& request, grpc::ByteBuffer* response) = 0;
};

// What the kubelet gets back.
struct Answer {
  grpc::Status status;
  grpc::ByteBuffer response;  // sent only when status is OK
};

}  // namespace qrm::shim
