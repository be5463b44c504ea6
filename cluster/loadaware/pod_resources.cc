#include "cluster/loadaware/pod_resources.h"

#include <cstdint>
#include <string_view>

namespace qrm::cluster::loadaware {
namespace {

using Getter = const ResourceList& (*)(const ContainerResources&);

const ResourceList& RequestsOf(const ContainerResources& c) {
  return c.requests;
}
const ResourceList& LimitsOf(const ContainerResources& c) {
  return c.limits;
}

// Saturating, so that absurd quantities of any resource stay defined behaviour; the estimator
// refuses the saturated values of the resources it reads.
int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

void AddList(ResourceList& to, const ResourceList& from) {
  for (const auto& [name, value] : from) to[name] = SaturatingAdd(to[name], value);
}

// maxResourceList: every name of `from` becomes the larger of the two.
void MaxList(ResourceList& to, const ResourceList& from) {
  for (const auto& [name, value] : from) {
    auto it = to.find(name);
    if (it == to.end() || value > it->second) to[name] = value;
  }
}

// aggregateContainerResourcesByFn, for spec resources.
ResourceList Aggregate(const PodInput& pod, Getter get) {
  ResourceList result;
  for (const ContainerResources& c : pod.containers) AddList(result, get(c));
  ResourceList sidecars;  // restartable init containers started so far
  ResourceList init_floor;
  for (const InitContainer& c : pod.init_containers) {
    if (c.restartable) {
      AddList(result, get(c.resources));
      AddList(sidecars, get(c.resources));
      MaxList(init_floor, sidecars);
    } else {
      ResourceList while_running = get(c.resources);
      AddList(while_running, sidecars);
      MaxList(init_floor, while_running);
    }
  }
  MaxList(result, init_floor);
  return result;
}

bool IsPodLevelResource(std::string_view name) {
  return name == kCpu || name == kMemory || name.substr(0, 10) == "hugepages-";
}

bool HasPodLevel(const ResourceList& list) {
  for (const auto& [name, value] : list) {
    if (IsPodLevelResource(name)) return true;
  }
  return false;
}

void ApplyPodLevel(ResourceList& result, const ResourceList& pod_level) {
  for (const auto& [name, value] : pod_level) {
    if (IsPodLevelResource(name)) result[name] = value;
  }
}

}  // namespace

ResourceList PodRequests(const PodInput& pod) {
  ResourceList requests = Aggregate(pod, RequestsOf);
  if (pod.pod_level_resources && HasPodLevel(pod.pod_level_resources->requests)) {
    ApplyPodLevel(requests, pod.pod_level_resources->requests);
  }
  AddList(requests, pod.overhead);
  return requests;
}

ResourceList PodLimits(const PodInput& pod) {
  ResourceList limits = Aggregate(pod, LimitsOf);
  // IsPodLevelResourcesSet: either pod-level map names a supported resource.
  if (pod.pod_level_resources && (HasPodLevel(pod.pod_level_resources->requests) ||
                                  HasPodLevel(pod.pod_level_resources->limits))) {
    ApplyPodLevel(limits, pod.pod_level_resources->limits);
  }
  for (const auto& [name, value] : pod.overhead) {
    auto it = limits.find(name);
    if (it != limits.end() && it->second != 0) it->second = SaturatingAdd(it->second, value);
  }
  return limits;
}

}  // namespace qrm::cluster::loadaware
