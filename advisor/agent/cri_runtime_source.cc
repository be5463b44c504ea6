#include "advisor/agent/cri_runtime_source.h"

namespace qrm::advisor {

CriRuntimeSource::CriRuntimeSource(const std::string& endpoint, ContainerDirectoryOptions options)
    : directory_(RuntimeChannel(endpoint), std::move(options)) {}

StatusOr<std::vector<TrackedContainer>> CriRuntimeSource::ListContainers() {
  auto entries = directory_.Refresh();
  if (!entries.ok()) return entries.status();
  std::vector<TrackedContainer> out;
  out.reserve(entries->size());
  for (ContainerEntry& e : *entries) {
    TrackedContainer c;
    c.pod_uid = std::move(e.pod_uid);
    c.pod_name = std::move(e.pod_name);
    c.pod_namespace = std::move(e.pod_namespace);
    c.name = std::move(e.container_name);
    c.container_id = std::move(e.container_id);
    c.cgroup_path = std::move(e.cgroup_path);
    c.cpu_request = e.cpu_request_cores;
    c.cpu_limit = e.cpu_limit_cores;
    c.cpu_quota_us = e.cpu_quota_us;
    c.cpu_period_us = e.cpu_period_us;
    c.created_unix = e.created_unix;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace qrm::advisor
