// Where a NUMA-bound container's memory may go: placement rules, topology hints and the
// per-node split of an allocation. Pure functions over MemoryState.
//
// Rules (a node is "allowed" for a container of pod P when all hold):
//   - numa_exclusive: an exclusive container only goes to nodes where no NUMA-bound container
//     of another pod is, and no NUMA-bound container of another pod goes where an exclusive
//     one is;
//   - role anti-affinity (RoleTable::AntiAffine): no node holds a NUMA-bound container of
//     another pod whose role is anti-affine to P's role (the design document's example 2:
//     storage-service and reranker never share a node).
// Containers of the same pod never exclude each other.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/numa_mask.h"
#include "common/status.h"
#include "plugins/memory/memory_state.h"
#include "qos/qos_requirement.h"

namespace qrm::memory {

// Who is being placed.
struct PlacementSubject {
  std::string pod_uid;
  std::string role;
  bool numa_exclusive = false;
};

// OK when every node of `nodes` is allowed for `who`; otherwise kResourceExhausted naming the
// first node that is not and why ("node 0 holds pod X (role storage-service), anti-affine to
// role reranker").
Status CheckPlacement(const MemoryState& state, const qos::RoleTable& roles,
                      const PlacementSubject& who, NumaMask nodes);

// The nodes of the machine that are allowed for `who`.
NumaMask AllowedNodes(const MemoryState& state, const qos::RoleTable& roles,
                      const PlacementSubject& who);

struct MemoryHint {
  NumaMask nodes;
  bool preferred = false;

  friend bool operator==(const MemoryHint&, const MemoryHint&) = default;
};

// Up to this many allowed nodes, every subset whose free memory fits is a hint, as the
// kubelet's memory manager does; beyond it, enumerating 2^n subsets is not an option (see
// BoundHints).
inline constexpr int kFullEnumerationNodes = 8;
// Upper bound on the preferred hints of a wide machine.
inline constexpr size_t kMaxPreferredHints = 64;

// Hints for `bytes` of NUMA-bound memory within `allowed`, narrowest first (NumaMask
// ordering). A node set "fits" when its nodes' free memory sums to at least `bytes`.
// Preferred: the fitting sets with the fewest nodes, so every single node that fits when one
// does. With at most kFullEnumerationNodes allowed nodes, every wider fitting set is listed
// too, not preferred. With more, the preferred sets (found by a pruned search, at most
// kMaxPreferredHints, always including the set of the nodes with the most free memory) and
// the whole allowed set, not preferred, when it is wider. Empty when nothing fits.
std::vector<MemoryHint> BoundHints(const MemoryState& state, NumaMask allowed, uint64_t bytes);

// Splits `bytes` over `nodes` in ascending node order, filling each node's free memory before
// the next; every node of `nodes` gets an entry (possibly 0). kResourceExhausted naming the
// nodes, the request and their free memory when it does not fit.
StatusOr<std::map<int, uint64_t>> SplitOverNodes(const MemoryState& state, NumaMask nodes,
                                                 uint64_t bytes);

}  // namespace qrm::memory
