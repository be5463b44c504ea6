#include "qrm/reconcile/rebuild.h"

#include <string_view>
#include <tuple>

namespace qrm::reconcile {

namespace pb = ::resourceplugin::v1alpha1;

namespace {

bool Reports(const pb::GetResourcesAllocationResponse& response, const std::string& uid,
             const std::string& container, const std::string& resource) {
  auto pod = response.pod_resources().find(uid);
  if (pod == response.pod_resources().end()) return false;
  auto c = pod->second.container_resources().find(container);
  return c != pod->second.container_resources().end() &&
         c->second.resource_allocation().contains(resource);
}

// The entries of a comma-separated list.
std::vector<std::string_view> SplitList(std::string_view list) {
  std::vector<std::string_view> out;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    out.push_back(list.substr(0, comma));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return out;
}

bool SkippedAtAdmission(const state::ContainerAllocation& container, const std::string& resource) {
  auto it = container.request.annotations().find(kSkippedResourcesAnnotation);
  if (it == container.request.annotations().end()) return false;
  for (std::string_view entry : SplitList(it->second)) {
    if (entry == resource) return true;
  }
  return false;
}

}  // namespace

std::vector<UnrecordedContainer> FindUnrecorded(const state::PodResources& stored,
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

std::vector<LostAllocation> FindLost(const state::PodResources& stored,
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

std::vector<LostAllocation> FindSkipped(const state::PodResources& stored,
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

std::vector<HeldSkipped> FindHeldSkipped(const state::PodResources& stored,
                                         const std::vector<PluginReport>& reports) {
  std::map<std::tuple<std::string, std::string, std::string>, pb::ResourceAllocationInfo> held;
  for (const PluginReport& report : reports) {
    if (report.response == nullptr) continue;
    const std::string& r = report.resource;
    for (const auto& [uid, pod] : stored) {
      auto reported = report.response->pod_resources().find(uid);
      if (reported == report.response->pod_resources().end()) continue;
      for (const auto& [name, container] : pod->containers) {
        if (container.resources.contains(r) || !SkippedAtAdmission(container, r)) continue;
        auto c = reported->second.container_resources().find(name);
        if (c == reported->second.container_resources().end()) continue;
        auto info = c->second.resource_allocation().find(r);
        if (info != c->second.resource_allocation().end()) held[{uid, name, r}] = info->second;
      }
    }
  }
  std::vector<HeldSkipped> out;
  out.reserve(held.size());
  for (auto& [key, info] : held) {
    out.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), std::move(info)});
  }
  return out;
}

pb::ResourceRequest WithoutSkipped(pb::ResourceRequest request, const std::string& resource) {
  auto& annotations = *request.mutable_annotations();
  auto it = annotations.find(kSkippedResourcesAnnotation);
  if (it == annotations.end()) return request;
  std::string kept;
  for (std::string_view entry : SplitList(it->second)) {
    if (entry == resource || entry.empty()) continue;
    if (!kept.empty()) kept += ',';
    kept += entry;
  }
  if (kept.empty()) {
    annotations.erase(it);
  } else {
    it->second = std::move(kept);
  }
  return request;
}

pb::ResourceRequest ReplayRequest(const state::ContainerAllocation& stored,
                                  const std::string& resource) {
  pb::ResourceRequest request = stored.request;
  request.set_resource_name(resource);
  if (auto it = stored.resources.find(resource); it != stored.resources.end()) {
    (*request.mutable_annotations())[kPreviousAllocationAnnotation] =
        it->second.allocation_result();
  }
  return request;
}

state::ContainerAllocation AdoptedAllocation(const UnrecordedContainer& found,
                                             const std::string& pod_name,
                                             const std::string& pod_namespace) {
  state::ContainerAllocation out;
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

}  // namespace qrm::reconcile
