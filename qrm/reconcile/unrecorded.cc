// Allocations some plugin holds for a container the host checkpoint does not have
// (reconciler.h, step 2b): adopted if the runtime has the container, released otherwise.
#include "common/log.h"
#include "qrm/reconcile/reconciler.h"

namespace qrm::reconcile {

void Reconciler::AdoptUnrecorded(
    const state::PodResources& before, const std::vector<UnrecordedContainer>& found,
    const std::set<std::string>& live,
    const std::map<std::string, std::shared_ptr<registry::PluginEndpoint>>& by_resource,
    ReconcileStats& stats) {
  auto log = Logger("reconcile");
  std::set<std::string> orphans;
  std::vector<const UnrecordedContainer*> candidates;
  for (const UnrecordedContainer& u : found) {
    if (live.contains(u.pod_uid)) {
      candidates.push_back(&u);
    } else if (!before.contains(u.pod_uid)) {
      orphans.insert(u.pod_uid);  // a pod the checkpoint knows is garbage collection's
    }
  }
  for (const std::string& uid : orphans) {
    if (!ReleasePod(uid, stats)) continue;  // logged; retried next tick
    ++stats.orphans_released;
    log->info(
        "pod={}: the plugins held allocations for a pod neither the host checkpoint nor the "
        "runtime has; released",
        uid);
  }
  if (candidates.empty()) return;

  auto listed = view_->ListContainers();
  if (!listed.ok()) {
    if (listed.status().code() != StatusCode::kUnimplemented || !warned_no_container_listing_) {
      log->warn(
          "cannot list the runtime's containers; {} unrecorded allocation(s) neither adopted nor "
          "released: {}",
          candidates.size(), listed.status().message());
      warned_no_container_listing_ = true;
    }
    return;
  }
  std::map<std::pair<std::string, std::string>, const RuntimeContainer*> by_key;
  for (const RuntimeContainer& c : *listed) by_key[{c.pod_uid, c.container_name}] = &c;
  for (const UnrecordedContainer* u : candidates) {
    auto it = by_key.find({u->pod_uid, u->container});
    if (it != by_key.end()) {
      AdoptOne(*u, *it->second, stats);
    } else {
      ReleaseUnadmitted(*u, by_resource, stats);
    }
  }
}

void Reconciler::AdoptOne(const UnrecordedContainer& found, const RuntimeContainer& rc,
                          ReconcileStats& stats) {
  auto log = Logger("reconcile");
  auto pod_lock = admission_.pod_locks().Lock(found.pod_uid);
  if (state_.GetContainer(found.pod_uid, found.container) != nullptr) return;  // admitted meanwhile
  state::ContainerAllocation allocation = AdoptedAllocation(found, rc.pod_name, rc.pod_namespace);
  if (auto update = apply::BuildContainerUpdate(allocation.resources); !update.ok()) {
    log->error("pod={} container={}: not adopting an invalid plugin allocation: {}", found.pod_uid,
               found.container, update.status().message());
    return;
  }
  if (Status s = state_.PutContainer(found.pod_uid, rc.pod_name, rc.pod_namespace, found.container,
                                     std::move(allocation));
      !s.ok()) {
    log->error("pod={} container={}: cannot adopt, retrying next tick: {}", found.pod_uid,
               found.container, s.message());
    return;
  }
  ++stats.containers_adopted;
  pending_apply_[{found.pod_uid, found.container}] = false;
  log->warn(
      "pod={}/{}({}) container={}: adopted {} resource allocation(s) the plugins hold but the "
      "host checkpoint had lost",
      rc.pod_namespace, rc.pod_name, found.pod_uid, found.container, found.resources.size());
}

// The pod is running but neither the checkpoint nor the runtime has the container: no
// admission owns what the plugins hold for it (an Allocate that answered after admission's
// deadline, after the rollback's RemovePod; or a removed container). An admission in flight
// holds the pod's admission lock until its result is checkpointed, so under that lock an
// absent container is not one being admitted. The protocol's only release is RemovePod: each
// plugin holding the container is sent it, then the pod's admitted containers it serves are
// replayed to it with their previous allocation, as admission's rollback does.
void Reconciler::ReleaseUnadmitted(
    const UnrecordedContainer& found,
    const std::map<std::string, std::shared_ptr<registry::PluginEndpoint>>& by_resource,
    ReconcileStats& stats) {
  auto log = Logger("reconcile");
  const auto release = claims_.TryRelease(found.pod_uid);
  if (!release) {  // the pod's stop or removal is in flight: it releases everything
    ++stats.releases_deferred;
    return;
  }
  auto pod_lock = admission_.pod_locks().Lock(found.pod_uid);
  if (state_.GetContainer(found.pod_uid, found.container) != nullptr) return;  // admitted meanwhile
  const std::shared_ptr<const state::PodAllocation> pod = state_.GetPod(found.pod_uid);
  int released = 0;
  for (const auto& [resource, info] : found.resources) {
    auto plugin = by_resource.find(resource);
    if (plugin == by_resource.end()) continue;
    if (Status s = plugin->second->RemovePod(found.pod_uid, rpc_timeout_); !s.ok()) {
      log->error(
          "pod={} container={}: cannot release {} held without an admission, retrying "
          "next tick: {}",
          found.pod_uid, found.container, resource, s.message());
      continue;
    }
    ++released;
    if (pod == nullptr) continue;
    for (const auto& [name, other] : pod->containers) {
      if (name == found.container || !other.resources.contains(resource)) continue;
      auto replay = plugin->second->Allocate(ReplayRequest(other, resource), rpc_timeout_);
      if (!replay.ok()) {
        log->error("pod={} container={}: giving {} back after a release failed: {}", found.pod_uid,
                   name, resource, replay.status().message());
      }
    }
  }
  if (released == 0) return;
  ++stats.unadmitted_released;
  log->warn(
      "pod={} container={}: released {} allocation(s) plugins held for a container the host "
      "never admitted or no longer has (an Allocate answered after its deadline, or the "
      "container was removed)",
      found.pod_uid, found.container, released);
}

}  // namespace qrm::reconcile
