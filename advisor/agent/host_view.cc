#include "advisor/agent/host_view.h"

#include <algorithm>

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

namespace qrm::advisor {

namespace adm = ::qrm::admin::v1;

int HostView::PoolCpus() const {
  return std::max(allocatable_cpus - static_cast<int>(dedicated.Size()), 0);
}

std::optional<int> HostView::SharedPoolSize() const {
  int shared = 0, reclaimed = 0;
  for (const auto& [key, c] : containers) {
    auto cpus = CpuSet::Parse(c.cpuset);
    if (!cpus.ok() || c.cpuset.empty()) continue;
    const int n = cpus->Size();
    if (c.qos_level == "shared_cores") shared = std::max(shared, n);
    if (c.qos_level == "reclaimed_cores") reclaimed = std::max(reclaimed, n);
  }
  if (shared > 0) return shared;
  if (reclaimed == 0) return std::nullopt;
  return reclaimed >= PoolCpus() ? PoolCpus() : PoolCpus() - reclaimed;
}

StatusOr<HostView> MakeHostView(const adm::ListAllocationsResponse& allocations,
                                const adm::GetAllocatableResponse& allocatable) {
  HostView view;
  if (auto it = allocatable.resources().find("cpu"); it != allocatable.resources().end()) {
    view.allocatable_cpus = static_cast<int>(it->second.aggregated_allocatable_quantity());
  }
  for (const adm::PodAllocation& pod : allocations.pods()) {
    for (const adm::ContainerAllocation& c : pod.containers()) {
      HostContainer hc{pod.name(), pod.namespace_(), c.qos_level(), c.cpuset_cpus()};
      if (c.qos_level() == "dedicated_cores" && !c.cpuset_cpus().empty()) {
        auto cpus = CpuSet::Parse(c.cpuset_cpus());
        if (!cpus.ok()) {
          return DataLossError(fmt::format("pod {}/{} container {}: cpuset \"{}\": {}",
                                           pod.namespace_(), pod.name(), c.name(), c.cpuset_cpus(),
                                           cpus.status().message()));
        }
        view.dedicated = view.dedicated.Union(*cpus);
      }
      view.containers.emplace(pod.uid() + "/" + c.name(), std::move(hc));
    }
  }
  return view;
}

HostClient::HostClient(std::string socket, std::chrono::milliseconds timeout)
    : socket_(std::move(socket)),
      timeout_(timeout),
      stub_(adm::Admin::NewStub(
          grpc::CreateChannel("unix:" + socket_, grpc::InsecureChannelCredentials()))) {}

StatusOr<HostAnswers> HostClient::FetchAnswers() {
  auto call = [&](auto method, const auto& request, auto& response) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + timeout_);
    const grpc::Status s = (stub_.get()->*method)(&ctx, request, &response);
    if (s.ok()) return Status::Ok();
    return UnavailableError(
        fmt::format("qrm-host admin socket {}: {}", socket_, s.error_message()));
  };
  HostAnswers answers;
  QRM_RETURN_IF_ERROR(
      call(&adm::Admin::Stub::ListAllocations, adm::ListAllocationsRequest{}, answers.allocations));
  QRM_RETURN_IF_ERROR(
      call(&adm::Admin::Stub::GetAllocatable, adm::GetAllocatableRequest{}, answers.allocatable));
  return answers;
}

StatusOr<HostView> HostClient::Fetch() {
  QRM_ASSIGN_OR_RETURN(HostAnswers answers, FetchAnswers());
  return MakeHostView(answers.allocations, answers.allocatable);
}

}  // namespace qrm::advisor
