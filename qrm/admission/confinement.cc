#include "qrm/admission/confinement.h"

#include <fmt/format.h>

#include "common/log.h"
#include "common/metrics/metrics.h"

namespace qrm::admission {
namespace {

std::string CpusetOf(const state::ContainerAllocation& c) {
  auto update = apply::BuildContainerUpdate(c.resources);
  return update.ok() ? update->resources.cpuset_cpus() : std::string();
}

bool NeedsConfinement(const state::ContainerAllocation& c) {
  return !StillSkipped(c).empty() && CpusetOf(c).empty();
}

}  // namespace

std::set<std::string> StillSkipped(const state::ContainerAllocation& container) {
  std::set<std::string> out;
  auto it = container.request.annotations().find(kSkippedResourcesAnnotation);
  if (it == container.request.annotations().end()) return out;
  const std::string& list = it->second;
  for (size_t start = 0; start <= list.size();) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string name = list.substr(start, comma - start);
    if (!name.empty() && !container.resources.contains(name)) out.insert(std::move(name));
    start = comma + 1;
  }
  return out;
}

CpuSet ExclusiveCpus(const state::PodResources& pods, const qos::RoleTable& roles,
                     const std::pair<std::string, std::string>& except) {
  CpuSet out;
  for (const auto& [uid, pod] : pods) {
    if (!pod) continue;
    for (const auto& [name, c] : pod->containers) {
      if (uid == except.first && name == except.second) continue;
      auto qos = qos::ResolveQos(c.request, roles);
      if (!qos.ok() || !qos->dedicated()) continue;
      auto cpus = CpuSet::Parse(CpusetOf(c));
      if (cpus.ok()) out = out.Union(*cpus);
    }
  }
  return out;
}

std::optional<CpuSet> Confinement::Allowed(const state::PodResources& pods,
                                           const std::pair<std::string, std::string>& key) const {
  if (!online_) return std::nullopt;
  return online_->Difference(ExclusiveCpus(pods, roles_, key));
}

Status Confinement::Apply(const std::string& pod_uid, const std::string& container,
                          const state::ContainerAllocation& allocation,
                          const state::PodResources& pods, apply::ContainerUpdate* update) {
  if (!NeedsConfinement(allocation)) return Status::Ok();
  const auto allowed = Allowed(pods, {pod_uid, container});
  if (!allowed) return Status::Ok();
  if (allowed->Empty()) {
    return FailedPreconditionError(fmt::format(
        "pod={} container={}: admitted without its CPU placement, but exclusive allocations "
        "hold every online CPU ({}); nowhere to confine it",
        pod_uid, container, online_->ToString()));
  }
  update->resources.set_cpuset_cpus(allowed->ToString());
  MutexLock lock(mu_);
  last_[{pod_uid, container}] = allowed->ToString();
  return Status::Ok();
}

void Confinement::Refresh(
    const state::PodResources& pods,
    std::map<std::pair<std::string, std::string>, apply::ContainerUpdate>& updates,
    std::map<std::pair<std::string, std::string>, bool>& pending) {
  MutexLock lock(mu_);
  std::map<std::pair<std::string, std::string>, std::string> now;
  for (const auto& [uid, pod] : pods) {
    if (!pod) continue;
    for (const auto& [name, c] : pod->containers) {
      if (!NeedsConfinement(c)) continue;
      const auto allowed = Allowed(pods, {uid, name});
      if (!allowed || allowed->Empty()) continue;
      const std::pair key{uid, name};
      now[key] = allowed->ToString();
      if (auto u = updates.find(key); u != updates.end()) {
        u->second.resources.set_cpuset_cpus(now[key]);
      }
      auto last = last_.find(key);
      if (last == last_.end() || last->second != now[key]) {
        Logger("admission")
            ->info("pod={} container={}: still without {}; confined to CPUs {}", uid, name,
                   fmt::join(StillSkipped(c), ","), now[key]);
        pending.emplace(key, false);
      }
    }
  }
  last_ = std::move(now);
  metrics::Default()
      .GetGauge("qrm_confined_containers",
                "Containers admitted without their CPU plugin, confined to the CPUs no exclusive "
                "allocation holds.")
      .Set(static_cast<double>(last_.size()));
}

}  // namespace qrm::admission
