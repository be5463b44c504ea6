#include "qrm/state/state_store.h"

#include <map>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <sys/stat.h>

#include "qrm/state/state_codec.h"

namespace qrm::host {

StateStore::StateStore(std::string path) : path_(std::move(path)) {}

Status StateStore::Load() {
  std::lock_guard lock(mu_);
  loaded_ = false;
  recovered_ = false;
  recovery_message_.clear();
  state_.clear();

  StatusOr<int> removed = checkpoint::RemoveStaleTempFiles(path_);
  if (!removed.ok()) {
    return removed.status().WithContext(
        fmt::format("state store {}: removing stale temp files", path_));
  }

  checkpoint::ReadOptions options;
  options.min_version = kVersion;
  options.max_version = kVersion;
  options.quarantine_corrupt = true;
  StatusOr<checkpoint::Checkpoint> cp = checkpoint::Read(path_, options);
  if (!cp.ok()) {
    const Status& s = cp.status();
    if (checkpoint::IsMissing(s)) {
      loaded_ = true;
      return Status::Ok();
    }
    if (checkpoint::IsCorrupt(s)) {
      // Starting empty is only safe if the evidence was moved aside; otherwise our first
      // write would replace it.
      struct stat st;
      if (::stat(path_.c_str(), &st) == 0) return s;
      recovered_ = true;
      recovery_message_ = s.message();
      loaded_ = true;
      return Status::Ok();
    }
    return s;
  }

  StatusOr<PodResources> decoded = DecodePodResources(cp->data);
  if (!decoded.ok()) {
    return DataLossError(fmt::format(
        "checkpoint {}: checksum is valid but the content is not: {}; the file is left in "
        "place (this is a qrm bug, not a disk fault)",
        path_, decoded.status().message()));
  }
  state_ = std::move(*decoded);
  loaded_ = true;
  return Status::Ok();
}

bool StateStore::recovered_from_corruption() const {
  std::lock_guard lock(mu_);
  return recovered_;
}

std::string StateStore::recovery_message() const {
  std::lock_guard lock(mu_);
  return recovery_message_;
}

PodResources StateStore::Snapshot() const {
  std::lock_guard lock(mu_);
  return state_;
}

std::optional<PodAllocation> StateStore::GetPod(const std::string& uid) const {
  std::lock_guard lock(mu_);
  auto it = state_.find(uid);
  if (it == state_.end()) return std::nullopt;
  return it->second;
}

std::optional<ContainerAllocation> StateStore::GetContainer(const std::string& uid,
                                                            const std::string& container) const {
  std::lock_guard lock(mu_);
  auto pod = state_.find(uid);
  if (pod == state_.end()) return std::nullopt;
  auto it = pod->second.containers.find(container);
  if (it == pod->second.containers.end()) return std::nullopt;
  return it->second;
}

Status StateStore::CheckLoadedLocked() const {
  if (loaded_) return Status::Ok();
  return FailedPreconditionError(fmt::format(
      "state store {}: not loaded; mutations are refused so that a checkpoint that was not "
      "read cannot be overwritten",
      path_));
}

template <typename Mutate>
Status StateStore::CommitLocked(const std::vector<std::string>& uids, Mutate&& mutate) {
  // Saving only the touched pods (not the whole state) keeps a mutation's cost to one
  // encode of the state, which the write needs anyway.
  std::map<std::string, std::optional<PodAllocation>> saved;
  for (const std::string& uid : uids) {
    auto it = state_.find(uid);
    saved.emplace(uid, it == state_.end() ? std::nullopt : std::optional(it->second));
  }
  mutate();

  rapidjson::Document data;
  Status status = EncodePodResources(state_, data);
  if (status.ok()) {
    checkpoint::WriteOptions options;
    options.fault_hook = fault_hook_;
    status = checkpoint::Write(path_, kVersion, data, options);
  }
  if (!status.ok()) {
    for (auto& [uid, pod] : saved) {
      if (pod) {
        state_[uid] = std::move(*pod);
      } else {
        state_.erase(uid);
      }
    }
  }
  return status;
}

Status StateStore::PutContainer(const std::string& uid, const std::string& pod_name,
                                const std::string& ns, const std::string& container,
                                ContainerAllocation allocation) {
  if (uid.empty() || container.empty()) {
    return InvalidArgumentError(
        fmt::format("PutContainer: pod uid \"{}\" and container name \"{}\" must not be empty", uid,
                    container));
  }
  for (const auto& entry : allocation.resources) {
    if (entry.first.empty()) {
      return InvalidArgumentError(
          fmt::format("PutContainer {} container {}: empty resource name", uid, container));
    }
  }
  allocation.request.clear_resource_name();

  std::lock_guard lock(mu_);
  QRM_RETURN_IF_ERROR(CheckLoadedLocked());
  return CommitLocked({uid}, [&] {
    PodAllocation& pod = state_[uid];
    pod.uid = uid;
    pod.name = pod_name;
    pod.ns = ns;
    pod.containers[container] = std::move(allocation);
  });
}

Status StateStore::SetPodAffinity(const std::string& uid, const std::string& pod_name,
                                  const std::string& ns, NumaMask affinity) {
  if (uid.empty()) return InvalidArgumentError("SetPodAffinity: empty pod uid");
  if (affinity.empty()) {
    return InvalidArgumentError(fmt::format("SetPodAffinity {}: empty NUMA affinity", uid));
  }
  std::lock_guard lock(mu_);
  QRM_RETURN_IF_ERROR(CheckLoadedLocked());
  return CommitLocked({uid}, [&] {
    PodAllocation& pod = state_[uid];
    pod.uid = uid;
    pod.name = pod_name;
    pod.ns = ns;
    pod.pod_affinity = affinity;
  });
}

Status StateStore::RemoveContainer(const std::string& uid, const std::string& container) {
  std::lock_guard lock(mu_);
  QRM_RETURN_IF_ERROR(CheckLoadedLocked());
  auto pod = state_.find(uid);
  if (pod == state_.end() || !pod->second.containers.contains(container)) return Status::Ok();
  return CommitLocked({uid}, [&] { state_[uid].containers.erase(container); });
}

Status StateStore::RemovePod(const std::string& uid) {
  std::lock_guard lock(mu_);
  QRM_RETURN_IF_ERROR(CheckLoadedLocked());
  if (!state_.contains(uid)) return Status::Ok();
  return CommitLocked({uid}, [&] { state_.erase(uid); });
}

Status StateStore::ApplyChanges(const std::vector<ResourceChange>& changes) {
  for (const ResourceChange& c : changes) {
    if (c.resource.empty()) {
      return InvalidArgumentError(
          fmt::format("ApplyChanges {} container {}: empty resource name", c.uid, c.container));
    }
  }
  std::lock_guard lock(mu_);
  QRM_RETURN_IF_ERROR(CheckLoadedLocked());

  // Keyed so that a later change to the same resource replaces an earlier one.
  std::map<std::tuple<std::string, std::string, std::string>, const ResourceChange*> effective;
  for (const ResourceChange& c : changes) {
    effective[{c.uid, c.container, c.resource}] = &c;
  }
  std::vector<std::string> uids;
  for (auto it = effective.begin(); it != effective.end();) {
    const ResourceChange& c = *it->second;
    auto pod = state_.find(c.uid);
    const ContainerAllocation* container = nullptr;
    if (pod != state_.end()) {
      auto found = pod->second.containers.find(c.container);
      if (found != pod->second.containers.end()) container = &found->second;
    }
    bool keep = container != nullptr;
    if (keep) {
      auto current = container->resources.find(c.resource);
      keep = current == container->resources.end() ||
             DeterministicBytes(current->second) != DeterministicBytes(c.info);
    }
    if (!keep) {
      it = effective.erase(it);
      continue;
    }
    if (uids.empty() || uids.back() != c.uid) uids.push_back(c.uid);  // the map is sorted by uid
    ++it;
  }
  if (effective.empty()) return Status::Ok();

  return CommitLocked(uids, [&] {
    for (const auto& [key, change] : effective) {
      state_[change->uid].containers[change->container].resources[change->resource] = change->info;
    }
  });
}

void StateStore::SetFaultHookForTesting(checkpoint::FaultHook hook) {
  std::lock_guard lock(mu_);
  fault_hook_ = std::move(hook);
}

}  // namespace qrm::host
