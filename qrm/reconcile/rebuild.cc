#include "qrm/reconcile/rebuild.h"

#include <string_view>
#include <tuple>

namespace qrm::host {

namespace {

bool Reports(const pb::GetResourcesAllocationResponse& response, const std::string& uid,
             const std::string& container, const std::string& resource) {
  auto pod = response.pod_resources().find(uid);
  if (pod == response.pod_resources().end()) return false;
  auto c = pod->second.container_resources().find(container);
  return c != pod->second.container_resources().end() &&
         c->second.resource_allocation().contains(resource);
}

bool SkippedAtAdmission(const ContainerAllocation& container, const std::string& resource) {
  auto it = container.request.annotations().find(kSkippedResourcesAnnotation);
  if (it == container.request.annotations().end()) return false;
  std::string_view list = it->second;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    if (list.substr(0, comma) == resource) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

std::vector<UnrecordedContainer> FindUnrecorded(const PodResources& stored,
                                                const std::vector<PluginReport>& reports) {
  std::map<std::pair<std::string, std::string>, UnrecordedContainer> found;
  for (const PluginReport& report : reports) {
    if (report.response == nullptr) continue;
    for (const auto& [uid, containers] : report.response->pod_resources()) {
      auto pod = stored.find(uid);
      for (const auto& [name, allocation] : containers.container_resources()) {
        if (pod != stored.end() && pod->second->containers.contains(name)) continue;
        auto info = allocation.resource_allocation().find(report.resource);
        if (info == allocation.resource_allocation().end()) continue;
        UnrecordedContainer& entry = found[{uid, name}];
        entry.pod_uid = uid;
        entry.container = name;
        entry.resources[report.resource] = info->second;
      }
    }
  }
  std::vector<UnrecordedContainer> out;
  out.reserve(found.size());
  for (auto& [key, entry] : found) out.push_back(std::move(entry));
  return out;
}

std::vector<LostAllocation> FindLost(const PodResources& stored,
                                     const std::vector<PluginReport>& reports) {
  std::set<std::tuple<std::string, std::string, std::string>> lost;
  for (const PluginReport& report : reports) {
    if (report.response == nullptr) continue;
    for (const auto& [uid, pod] : stored) {
      for (const auto& [name, container] : pod->containers) {
        if (!container.resources.contains(report.resource)) continue;
        if (Reports(*report.response, uid, name, report.resource)) continue;
        lost.insert({uid, name, report.resource});
      }
    }
  }
  std::vector<LostAllocation> out;
  out.reserve(lost.size());
  for (const auto& [uid, name, resource] : lost) out.push_back({uid, name, resource});
  return out;
}

std::vector<LostAllocation> FindSkipped(const PodResources& stored,
                                        const std::vector<PluginReport>& reports) {
  std::set<std::tuple<std::string, std::string, std::string>> skipped;
  for (const PluginReport& report : reports) {
    if (report.response == nullptr) continue;
    const std::string& r = report.resource;
    for (const auto& [uid, pod] : stored) {
      for (const auto& [name, container] : pod->containers) {
        if (container.resources.contains(r) || !SkippedAtAdmission(container, r)) continue;
        if (Reports(*report.response, uid, name, r)) continue;
        skipped.insert({uid, name, r});
      }
    }
  }
  std::vector<LostAllocation> out;
  out.reserve(skipped.size());
  for (const auto& [uid, name, resource] : skipped) out.push_back({uid, name, resource, true});
  return out;
}

pb::ResourceRequest ReplayRequest(const ContainerAllocation& stored, const std::string& resource) {
  pb::ResourceRequest request = stored.request;
  request.set_resource_name(resource);
  if (auto it = stored.resources.find(resource); it != stored.resources.end()) {
    (*request.mutable_annotations())[kPreviousAllocationAnnotation] =
        it->second.allocation_result();
  }
  return request;
}

ContainerAllocation AdoptedAllocation(const UnrecordedContainer& found, const std::string& pod_name,
                                      const std::string& pod_namespace) {
  ContainerAllocation out;
  out.request.set_pod_uid(found.pod_uid);
  out.request.set_pod_name(pod_name);
  out.request.set_pod_namespace(pod_namespace);
  out.request.set_container_name(found.container);
  (*out.request.mutable_annotations())[kAdoptedAnnotation] = "true";
  for (const auto& [resource, info] : found.resources) {
    (*out.request.mutable_resource_requests())[resource] = info.allocated_quantity();
    out.resources[resource] = info;
  }
  return out;
}

}  // namespace qrm::host
