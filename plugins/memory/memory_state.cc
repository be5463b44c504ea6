#include "plugins/memory/memory_state.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace qrm::memory {

MemoryState::MemoryState(std::vector<NodeMemory> nodes) : nodes_(std::move(nodes)) {
  std::sort(nodes_.begin(), nodes_.end(),
            [](const NodeMemory& a, const NodeMemory& b) { return a.id < b.id; });
  for (const NodeMemory& node : nodes_) {
    mask_ = mask_.With(node.id);
    allocated_[node.id] = 0;
  }
}

const NodeMemory* MemoryState::Node(int id) const {
  for (const NodeMemory& node : nodes_) {
    if (node.id == id) return &node;
  }
  return nullptr;
}

uint64_t MemoryState::AllocatedOn(int node) const {
  auto it = allocated_.find(node);
  return it == allocated_.end() ? 0 : it->second;
}

uint64_t MemoryState::FreeOn(int node) const {
  const NodeMemory* n = Node(node);
  if (n == nullptr) return 0;
  const uint64_t allocated = AllocatedOn(node);
  return n->allocatable_bytes() > allocated ? n->allocatable_bytes() - allocated : 0;
}

uint64_t MemoryState::FreeOn(NumaMask nodes) const {
  uint64_t sum = 0;
  for (int node : nodes.Nodes()) sum += FreeOn(node);
  return sum;
}

const PodMemory* MemoryState::Pod(const std::string& uid) const {
  auto it = pods_.find(uid);
  return it == pods_.end() ? nullptr : &it->second;
}

const ContainerMemory* MemoryState::Find(const std::string& uid,
                                         const std::string& container) const {
  const PodMemory* pod = Pod(uid);
  if (pod == nullptr) return nullptr;
  auto it = pod->containers.find(container);
  return it == pod->containers.end() ? nullptr : &it->second;
}

Status MemoryState::Add(const std::string& uid, const std::string& pod_name,
                        const std::string& pod_ns, const std::string& container,
                        ContainerMemory memory) {
  if (Find(uid, container) != nullptr) {
    return AlreadyExistsError(
        fmt::format("pod {} container {} already holds memory", uid, container));
  }
  if (!memory.nodes.IsSubsetOf(mask_)) {
    return InvalidArgumentError(
        fmt::format("NUMA nodes \"{}\" are not all on this machine (\"{}\")",
                    memory.nodes.ToString(), mask_.ToString()));
  }
  uint64_t split_sum = 0;
  for (const auto& [node, bytes] : memory.bytes_by_node) {
    if (!memory.nodes.Has(node)) {
      return InvalidArgumentError(fmt::format("{} bytes on node {}, which is outside nodes \"{}\"",
                                              bytes, node, memory.nodes.ToString()));
    }
    if (bytes > FreeOn(node)) {
      return ResourceExhaustedError(
          fmt::format("{} bytes do not fit on NUMA node {} ({} free)", bytes, node, FreeOn(node)));
    }
    split_sum += bytes;
  }
  if (memory.numa_bound() && split_sum != memory.bytes) {
    return InvalidArgumentError(fmt::format(
        "per-node shares sum to {} bytes, not the container's {}", split_sum, memory.bytes));
  }
  if (!memory.numa_bound() && !memory.bytes_by_node.empty()) {
    return InvalidArgumentError("an unbound container cannot hold memory on a NUMA node");
  }
  Account(memory, true);
  PodMemory& pod = pods_[uid];
  pod.name = pod_name;
  pod.ns = pod_ns;
  pod.containers.emplace(container, std::move(memory));
  return Status::Ok();
}

void MemoryState::RemoveContainer(const std::string& uid, const std::string& container) {
  auto pod = pods_.find(uid);
  if (pod == pods_.end()) return;
  auto it = pod->second.containers.find(container);
  if (it == pod->second.containers.end()) return;
  Account(it->second, false);
  pod->second.containers.erase(it);
  if (pod->second.containers.empty()) pods_.erase(pod);
}

std::optional<PodMemory> MemoryState::RemovePod(const std::string& uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return std::nullopt;
  PodMemory removed = std::move(it->second);
  pods_.erase(it);
  for (const auto& [name, memory] : removed.containers) Account(memory, false);
  return removed;
}

void MemoryState::RestorePod(const std::string& uid, PodMemory pod) {
  for (const auto& [name, memory] : pod.containers) Account(memory, true);
  pods_[uid] = std::move(pod);
}

void MemoryState::Account(const ContainerMemory& memory, bool add) {
  if (!memory.numa_bound()) {
    unbound_bytes_ = add ? unbound_bytes_ + memory.bytes : unbound_bytes_ - memory.bytes;
    return;
  }
  for (const auto& [node, bytes] : memory.bytes_by_node) {
    allocated_[node] = add ? allocated_[node] + bytes : allocated_[node] - bytes;
  }
}

}  // namespace qrm::memory
