// Carrying a call's context across the proxy: request metadata, deadline and cancellation
// to the runtime; response metadata back to the kubelet.
#pragma once

#include <memory>

#include <grpcpp/client_context.h>
#include <grpcpp/server_context.h>

namespace qrm::shim {

// A context for forwarding the kubelet's call: the kubelet's deadline and cancellation
// (gRPC propagation from the server call) and its metadata, minus the transport headers
// gRPC writes itself (pseudo-headers, content-type, te, user-agent, grpc-*).
std::unique_ptr<grpc::ClientContext> ForwardingContext(const grpc::CallbackServerContext& server);

// The runtime's initial / trailing metadata into the kubelet's call (same filter). Initial
// metadata only once the runtime sent it; both before the server call sends its own.
void CopyInitialMetadata(const grpc::ClientContext& from, grpc::CallbackServerContext* to);
void CopyTrailingMetadata(const grpc::ClientContext& from, grpc::CallbackServerContext* to);

}  // namespace qrm::shim
