#include "qrmctl/admin_client.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include "common/grpc_status.h"

namespace qrm::ctl {

namespace adm = ::qrm::admin::v1;
namespace {

std::unique_ptr<grpc::ClientContext> Context() {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(15));
  return ctx;
}

}  // namespace

AdminClient::AdminClient(std::string socket)
    : socket_(std::move(socket)),
      stub_(adm::Admin::NewStub(
          grpc::CreateChannel("unix:" + socket_, grpc::InsecureChannelCredentials()))) {}

Status AdminClient::Explain(const grpc::Status& s) const {
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE ||
      s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return UnavailableError(fmt::format(
        "cannot reach qrm-host's admin socket {} ({}): is qrm-host running, and are you root "
        "(or allowed by --admin-allowed-uids)? Use --admin-socket for another path",
        socket_, s.error_message()));
  }
  return FromGrpcStatus(s);
}

StatusOr<adm::ListPluginsResponse> AdminClient::ListPlugins() {
  adm::ListPluginsResponse r;
  grpc::Status s = stub_->ListPlugins(Context().get(), {}, &r);
  if (!s.ok()) return Explain(s);
  return r;
}

StatusOr<adm::ListAllocationsResponse> AdminClient::ListAllocations(const std::string& pod) {
  adm::ListAllocationsRequest req;
  req.set_pod(pod);
  adm::ListAllocationsResponse r;
  grpc::Status s = stub_->ListAllocations(Context().get(), req, &r);
  if (!s.ok()) return Explain(s);
  return r;
}

StatusOr<adm::GetAllocatableResponse> AdminClient::GetAllocatable() {
  adm::GetAllocatableResponse r;
  grpc::Status s = stub_->GetAllocatable(Context().get(), {}, &r);
  if (!s.ok()) return Explain(s);
  return r;
}

}  // namespace qrm::ctl
