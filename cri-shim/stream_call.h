// StreamCall: forwards one call of any arity as a bidirectional stream of opaque messages,
// for methods our .proto declares streaming (GetContainerEvents, ...) and for methods it does
// not know at all (a newer CRI), whose arity the shim cannot tell.
//
// Two pumps run independently, each with at most one message in flight:
//   upstream    kubelet -> runtime: server read, client write, ...; the kubelet's half-close
//               becomes the runtime's WritesDone;
//   downstream  runtime -> kubelet: client read, server write, ...; the runtime's status
//               and trailing metadata become the kubelet's, unchanged.
// The runtime's initial metadata is copied to the kubelet before the first message. If the
// kubelet cancels, the runtime call is cancelled (gRPC propagation, and explicitly).
// The client side holds two holds (one per pump) so that its OnDone cannot run while either
// pump may still start an operation on it. The object deletes itself once both sides are
// done.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/generic/generic_stub.h>

#include "common/mutex.h"
#include "cri-shim/counters.h"

namespace qrm::shim {

class StreamCall final : public grpc::ServerGenericBidiReactor {
 public:
  // Starts both pumps.
  StreamCall(grpc::GenericCallbackServerContext* context, grpc::GenericStub& stub,
             MethodCounters& method_counters, ShimCounters& counters);

  // Server side (kubelet).
  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  class Client final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
   public:
    explicit Client(StreamCall& call) : call_(call) {}
    void OnReadInitialMetadataDone(bool ok) override { call_.OnClientMetadata(ok); }
    void OnReadDone(bool ok) override { call_.OnClientRead(ok); }
    void OnWriteDone(bool ok) override { call_.OnClientWrite(ok); }
    void OnDone(const grpc::Status& status) override { call_.OnClientDone(status); }

   private:
    StreamCall& call_;
  };

  void OnClientMetadata(bool ok);
  void OnClientRead(bool ok);
  void OnClientWrite(bool ok);
  void OnClientDone(const grpc::Status& status);
  // The kubelet's call ends with the runtime's status; nothing may touch `this` afterwards.
  void FinishServer();
  void Unref();

  grpc::GenericCallbackServerContext* const context_;
  MethodCounters& method_counters_;
  ShimCounters& counters_;
  std::unique_ptr<grpc::ClientContext> client_context_;
  Client client_{*this};
  grpc::ByteBuffer upstream_;    // kubelet -> runtime, one message in flight
  grpc::ByteBuffer downstream_;  // runtime -> kubelet, one message in flight

  Mutex mu_;
  bool upstream_writing_ QRM_GUARDED_BY(mu_) = false;  // a client write is in flight
  bool upstream_closed_ QRM_GUARDED_BY(mu_) =
      false;  // no more client writes; the write hold is released
  bool downstream_closed_ QRM_GUARDED_BY(mu_) =
      false;  // no more client reads; the read hold is released
  bool metadata_ready_ QRM_GUARDED_BY(mu_) =
      false;  // the runtime's initial metadata is known (or never will be)
  bool message_waiting_ QRM_GUARDED_BY(mu_) =
      false;                  // downstream_ holds a message waiting for metadata_ready_
  std::atomic<int> refs_{2};  // the server side's OnDone and the client side's OnDone
};

}  // namespace qrm::shim
