#include "qrm/podresources/active_pods.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace qrm::podresources {
namespace {

struct LivePod {
  std::string name, ns;
  std::set<std::string> containers;
};

}  // namespace

std::vector<::v1::PodResources> ActivePodResources(
    const state::PodResources& checkpoint, const std::vector<reconcile::RuntimeContainer>& runtime,
    const PodResourcesMapping& mapping) {
  std::map<std::string, LivePod> live;  // by pod uid
  for (const reconcile::RuntimeContainer& c : runtime) {
    if (c.pod_uid.empty() || c.container_name.empty()) continue;
    LivePod& pod = live[c.pod_uid];
    pod.name = c.pod_name;
    pod.ns = c.pod_namespace;
    pod.containers.insert(c.container_name);  // a restarted container is listed twice
  }
  std::map<std::string, ::v1::PodResources> out;
  for (const auto& [uid, pod] : checkpoint) {
    if (pod) out[uid] = ToPodResources(*pod, mapping);
  }
  for (const auto& [uid, pod] : live) {
    auto [it, added] = out.try_emplace(uid);
    ::v1::PodResources& listed = it->second;
    if (added) {
      listed.set_name(pod.name);
      listed.set_namespace_(pod.ns);
    }
    std::set<std::string> known;
    for (const auto& c : listed.containers()) known.insert(c.name());
    for (const std::string& name : pod.containers) {
      if (!known.contains(name)) listed.add_containers()->set_name(name);
    }
    // Keep the containers in name order whichever side named them.
    std::sort(listed.mutable_containers()->begin(), listed.mutable_containers()->end(),
              [](const auto& a, const auto& b) { return a.name() < b.name(); });
  }
  std::vector<::v1::PodResources> result;
  result.reserve(out.size());
  for (auto& [uid, pod] : out) result.push_back(std::move(pod));
  return result;
}

}  // namespace qrm::podresources
