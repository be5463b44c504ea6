// MemoryState: the memory plugin's accounting, per NUMA node and per container.
//
// Each node has a total (from discovery), a system reservation (config) and what NUMA-bound
// containers were given on it. Containers that are not NUMA-bound get no cpuset.mems, so the
// kernel may place their pages anywhere: their bytes are recorded, but outside any node
// (UnboundBytes), and never reduce a node's free memory.
//
// A plain value with no locking and no I/O: the plugin serializes access and persists it
// (memory_checkpoint.h). Every mutator either applies completely or changes nothing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/numa_mask.h"
#include "common/status.h"

namespace qrm::memory {

struct NodeMemory {
  int id = 0;
  uint64_t total_bytes = 0;
  uint64_t reserved_bytes = 0;  // "systemReserved"

  uint64_t allocatable_bytes() const {
    return total_bytes > reserved_bytes ? total_bytes - reserved_bytes : 0;
  }
};

// What one container holds.
struct ContainerMemory {
  uint64_t bytes = 0;
  // NUMA-bound containers: their cpuset.mems and the bytes accounted on each of those nodes
  // (the values sum to `bytes`; a node of `nodes` may hold 0). Empty for unbound containers.
  NumaMask nodes;
  std::map<int, uint64_t> bytes_by_node;
  // The hint's preferred flag, reported back in resource_hints.
  bool hint_preferred = false;
  // Kept for the placement rules of later containers (memory_placement.h).
  std::string role;
  bool numa_exclusive = false;

  bool numa_bound() const { return !nodes.empty(); }
};

struct PodMemory {
  std::string name;
  std::string ns;
  std::map<std::string, ContainerMemory> containers;  // by container name
};

class MemoryState {
 public:
  // Nodes in any order; they are kept sorted by id. Ids must be distinct and below 64.
  explicit MemoryState(std::vector<NodeMemory> nodes);

  const std::vector<NodeMemory>& nodes() const { return nodes_; }
  const NodeMemory* Node(int id) const;  // nullptr when not a node of this machine
  NumaMask NodeMask() const { return mask_; }

  uint64_t AllocatedOn(int node) const;
  // allocatable - allocated; 0 when a node is over-allocated (only possible after the
  // reservation was raised across a restart, which restore refuses).
  uint64_t FreeOn(int node) const;
  uint64_t FreeOn(NumaMask nodes) const;  // sum over the nodes
  uint64_t UnboundBytes() const { return unbound_bytes_; }

  const std::map<std::string, PodMemory>& pods() const { return pods_; }
  const PodMemory* Pod(const std::string& uid) const;
  const ContainerMemory* Find(const std::string& uid, const std::string& container) const;

  // Records a container. Errors, with nothing changed:
  //   kAlreadyExists       the container is already recorded;
  //   kInvalidArgument     an inconsistent entry: a node that is not on this machine, a split
  //                        over nodes outside `nodes`, shares not summing to `bytes`;
  //   kResourceExhausted   a node's share is above its free memory (names node and bytes).
  Status Add(const std::string& uid, const std::string& pod_name, const std::string& pod_ns,
             const std::string& container, ContainerMemory memory);
  // Forgets one container (the rollback of an Add whose persist failed).
  void RemoveContainer(const std::string& uid, const std::string& container);
  // Removes a pod and returns what it held (to put back with RestorePod if persisting the
  // removal fails); nullopt when the pod is unknown.
  std::optional<PodMemory> RemovePod(const std::string& uid);
  void RestorePod(const std::string& uid, PodMemory pod);

 private:
  void Account(const ContainerMemory& memory, bool add);

  std::vector<NodeMemory> nodes_;
  NumaMask mask_;
  std::map<int, uint64_t> allocated_;  // node id -> bytes of NUMA-bound containers
  uint64_t unbound_bytes_ = 0;
  std::map<std::string, PodMemory> pods_;  // by pod UID
};

}  // namespace qrm::memory
