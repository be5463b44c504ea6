#include "cri-shim/runtime_index.h"

#include <algorithm>

namespace qrm::shim {

void RuntimeIndex::AddSandbox(const std::string& id, PodInfo pod, bool ready) {
  MutexLock lock(mu_);
  sandboxes_[id] = Sandbox{id, std::move(pod), ready};
}

std::optional<RuntimeIndex::Sandbox> RuntimeIndex::FindSandbox(const std::string& id) const {
  MutexLock lock(mu_);
  auto it = sandboxes_.find(id);
  if (it == sandboxes_.end()) return std::nullopt;
  return it->second;
}

void RuntimeIndex::MarkSandboxNotReady(const std::string& id) {
  MutexLock lock(mu_);
  if (auto it = sandboxes_.find(id); it != sandboxes_.end()) it->second.ready = false;
}

void RuntimeIndex::RemoveSandbox(const std::string& id) {
  MutexLock lock(mu_);
  sandboxes_.erase(id);
  std::vector<std::string> inside;
  for (const auto& [cid, c] : containers_) {
    if (c.sandbox_id == id) inside.push_back(cid);
  }
  for (const auto& cid : inside) RemoveContainerLocked(cid);
}

bool RuntimeIndex::HasOtherReadySandbox(const std::string& pod_uid,
                                        const std::string& except_sandbox_id) const {
  MutexLock lock(mu_);
  for (const auto& [id, s] : sandboxes_) {
    if (id != except_sandbox_id && s.ready && s.pod.uid == pod_uid) return true;
  }
  return false;
}

std::set<std::string> RuntimeIndex::ReadyPodUids() const {
  MutexLock lock(mu_);
  std::set<std::string> uids;
  for (const auto& [id, s] : sandboxes_) {
    if (s.ready && !s.pod.uid.empty()) uids.insert(s.pod.uid);
  }
  return uids;
}

void RuntimeIndex::BeginCreate(const ContainerKey& key) {
  MutexLock lock(mu_);
  ++creating_[key];
}

void RuntimeIndex::EndCreate(const ContainerKey& key, const Container* created) {
  MutexLock lock(mu_);
  if (auto it = creating_.find(key); it != creating_.end() && --it->second <= 0) {
    creating_.erase(it);
  }
  if (created != nullptr) AddContainerLocked(*created);
}

bool RuntimeIndex::InUse(const ContainerKey& key) const {
  MutexLock lock(mu_);
  return ids_by_key_.contains(key) || creating_.contains(key);
}

void RuntimeIndex::AddContainer(const Container& container) {
  MutexLock lock(mu_);
  AddContainerLocked(container);
}

void RuntimeIndex::AddContainerLocked(const Container& container) {
  RemoveContainerLocked(container.id);  // a reused id is a new container
  containers_[container.id] = container;
  ids_by_key_[container.key].push_back(container.id);
}

std::optional<RuntimeIndex::Container> RuntimeIndex::FindContainer(const std::string& id) const {
  MutexLock lock(mu_);
  auto it = containers_.find(id);
  if (it == containers_.end()) return std::nullopt;
  return it->second;
}

std::optional<ContainerKey> RuntimeIndex::RemoveContainer(const std::string& id) {
  MutexLock lock(mu_);
  auto it = containers_.find(id);
  if (it == containers_.end()) return std::nullopt;
  const ContainerKey key = it->second.key;
  RemoveContainerLocked(id);
  if (ids_by_key_.contains(key) || creating_.contains(key)) return std::nullopt;
  return key;
}

void RuntimeIndex::RemoveContainerLocked(const std::string& id) {
  auto it = containers_.find(id);
  if (it == containers_.end()) return;
  auto ids = ids_by_key_.find(it->second.key);
  if (ids != ids_by_key_.end()) {
    std::erase(ids->second, id);
    if (ids->second.empty()) ids_by_key_.erase(ids);
  }
  containers_.erase(it);
}

std::optional<std::string> RuntimeIndex::NewestContainerId(const ContainerKey& key) const {
  MutexLock lock(mu_);
  auto it = ids_by_key_.find(key);
  if (it == ids_by_key_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

void RuntimeIndex::Reset(const std::vector<Sandbox>& sandboxes,
                         const std::vector<Container>& containers) {
  MutexLock lock(mu_);
  sandboxes_.clear();
  containers_.clear();
  ids_by_key_.clear();
  for (const auto& s : sandboxes) sandboxes_[s.id] = s;
  for (const auto& c : containers) {
    containers_[c.id] = c;
    ids_by_key_[c.key].push_back(c.id);
  }
}

size_t RuntimeIndex::sandbox_count() const {
  MutexLock lock(mu_);
  return sandboxes_.size();
}

size_t RuntimeIndex::container_count() const {
  MutexLock lock(mu_);
  return containers_.size();
}

}  // namespace qrm::shim
