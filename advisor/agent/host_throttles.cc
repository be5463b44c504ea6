#include "advisor/agent/host_throttles.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include "common/grpc_status.h"

namespace qrm::advisor {
namespace adm = ::qrm::admin::v1;

HostThrottles::HostThrottles(std::string socket, std::chrono::milliseconds timeout)
    : socket_(std::move(socket)),
      timeout_(timeout),
      stub_(adm::Admin::NewStub(
          grpc::CreateChannel("unix:" + socket_, grpc::InsecureChannelCredentials()))) {}

Status HostThrottles::Call(const char* what, const grpc::Status& s) const {
  if (s.ok()) return Status::Ok();
  return FromGrpcStatus(s).WithContext(fmt::format("qrm-host admin socket {}: {}", socket_, what));
}

StatusOr<adm::CpuThrottle> HostThrottles::Set(const ContainerThrottle& t) {
  adm::SetCpuThrottleRequest request;
  request.set_pod_uid(t.pod_uid);
  request.set_container(t.container);
  request.set_quota_us(t.quota_us);
  request.set_period_us(t.period_us);
  request.set_restore_quota_us(t.restore_quota_us);
  request.set_restore_period_us(t.restore_period_us);
  request.set_lease_seconds(t.lease_s);
  request.set_owner(kOwner);
  request.set_reason(t.reason);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + timeout_);
  adm::CpuThrottle answer;
  QRM_RETURN_IF_ERROR(Call("SetCpuThrottle", stub_->SetCpuThrottle(&ctx, request, &answer)));
  return answer;
}

Status HostThrottles::Clear(const std::string& pod_uid, const std::string& container) {
  adm::ClearCpuThrottleRequest request;
  request.set_pod_uid(pod_uid);
  request.set_container(container);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + timeout_);
  adm::ClearCpuThrottleResponse answer;
  return Call("ClearCpuThrottle", stub_->ClearCpuThrottle(&ctx, request, &answer));
}

StatusOr<std::vector<adm::CpuThrottle>> HostThrottles::List() {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + timeout_);
  adm::ListCpuThrottlesResponse answer;
  QRM_RETURN_IF_ERROR(Call("ListCpuThrottles",
                           stub_->ListCpuThrottles(&ctx, adm::ListCpuThrottlesRequest{}, &answer)));
  std::vector<adm::CpuThrottle> out;
  for (const auto& t : answer.throttles()) {
    if (t.owner() == kOwner) out.push_back(t);
  }
  return out;
}

}  // namespace qrm::advisor
