#include "cri-shim/metadata.h"

#include <string>
#include <string_view>

namespace qrm::shim {
namespace {

// Headers gRPC owns on each hop; copying them would duplicate or contradict the hop's own.
bool IsTransportHeader(std::string_view key) {
  return key.empty() || key.front() == ':' || key == "content-type" || key == "te" ||
         key == "user-agent" || key.rfind("grpc-", 0) == 0;
}

std::string_view View(const grpc::string_ref& s) {
  return std::string_view(s.data(), s.size());
}

}  // namespace

std::unique_ptr<grpc::ClientContext> ForwardingContext(const grpc::CallbackServerContext& server) {
  std::unique_ptr<grpc::ClientContext> context =
      grpc::ClientContext::FromCallbackServerContext(server);
  for (const auto& [key, value] : server.client_metadata()) {
    if (IsTransportHeader(View(key))) continue;
    context->AddMetadata(std::string(View(key)), std::string(View(value)));
  }
  return context;
}

void CopyInitialMetadata(const grpc::ClientContext& from, grpc::CallbackServerContext* to) {
  for (const auto& [key, value] : from.GetServerInitialMetadata()) {
    if (IsTransportHeader(View(key))) continue;
    to->AddInitialMetadata(std::string(View(key)), std::string(View(value)));
  }
}

void CopyTrailingMetadata(const grpc::ClientContext& from, grpc::CallbackServerContext* to) {
  for (const auto& [key, value] : from.GetServerTrailingMetadata()) {
    if (IsTransportHeader(View(key))) continue;
    to->AddTrailingMetadata(std::string(View(key)), std::string(View(value)));
  }
}

}  // namespace qrm::shim
