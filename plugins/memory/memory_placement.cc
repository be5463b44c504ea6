#include "plugins/memory/memory_placement.h"

#include <algorithm>
#include <functional>
#include <optional>

#include <fmt/format.h>

namespace qrm::memory {
namespace {

// Why a NUMA-bound container `c` of another pod keeps `who` off its nodes, or nullopt.
std::optional<std::string> Conflict(const qos::RoleTable& roles, const PlacementSubject& who,
                                    const std::string& other_uid, const PodMemory& other,
                                    const ContainerMemory& c) {
  const std::string pod = fmt::format("pod {}/{} ({})", other.ns, other.name, other_uid);
  if (c.numa_exclusive) return fmt::format("is held exclusively by {}", pod);
  if (who.numa_exclusive) {
    return fmt::format("holds NUMA-bound {}, and an exclusive container needs its nodes alone",
                       pod);
  }
  if (roles.AntiAffine(who.role, c.role)) {
    return fmt::format("holds {} of role \"{}\", anti-affine to role \"{}\"", pod, c.role,
                       who.role);
  }
  return std::nullopt;
}

// The nodes of `within` that `who` may not use; `first_reason` gets the reason for the
// lowest such node.
NumaMask BlockedNodes(const MemoryState& state, const qos::RoleTable& roles,
                      const PlacementSubject& who, NumaMask within, std::string* first_reason) {
  NumaMask blocked;
  int first_node = NumaMask::kMaxNodes;
  for (const auto& [uid, pod] : state.pods()) {
    if (uid == who.pod_uid) continue;
    for (const auto& [name, c] : pod.containers) {
      const NumaMask overlap = c.nodes.And(within);
      if (overlap.empty()) continue;
      std::optional<std::string> why = Conflict(roles, who, uid, pod, c);
      if (!why) continue;
      blocked = blocked.Or(overlap);
      const int lowest = overlap.Nodes().front();
      if (first_reason != nullptr && lowest < first_node) {
        first_node = lowest;
        *first_reason = fmt::format("NUMA node {} {}", lowest, *why);
      }
    }
  }
  return blocked;
}

bool Fits(const MemoryState& state, NumaMask nodes, uint64_t bytes) {
  return state.FreeOn(nodes) >= bytes;
}

void SortNarrowestFirst(std::vector<MemoryHint>& hints) {
  std::sort(hints.begin(), hints.end(), [](const MemoryHint& a, const MemoryHint& b) {
    return a.nodes.IsNarrowerThan(b.nodes);
  });
}

// Every fitting subset of a small `allowed` set, the narrowest ones preferred.
std::vector<MemoryHint> AllSubsetHints(const MemoryState& state, NumaMask allowed, uint64_t bytes) {
  std::vector<MemoryHint> hints;
  int narrowest = NumaMask::kMaxNodes + 1;
  const uint64_t all = allowed.bits();
  for (uint64_t s = all; s != 0; s = (s - 1) & all) {
    const NumaMask mask = NumaMask::FromBits(s);
    if (!Fits(state, mask, bytes)) continue;
    hints.push_back({mask, false});
    narrowest = std::min(narrowest, mask.Count());
  }
  for (MemoryHint& h : hints) h.preferred = h.nodes.Count() == narrowest;
  return hints;
}

// A wide machine: the fitting sets of the smallest size k (the k nodes with the most free
// memory fit, and no k-1 nodes do), searched in ascending node order and pruned with an
// upper bound (the largest free amounts overall), then the whole allowed set.
std::vector<MemoryHint> NarrowestHints(const MemoryState& state, NumaMask allowed, uint64_t bytes) {
  const std::vector<int> nodes = allowed.Nodes();
  std::vector<uint64_t> free;
  free.reserve(nodes.size());
  for (int n : nodes) free.push_back(state.FreeOn(n));
  std::vector<size_t> by_free(nodes.size());
  for (size_t i = 0; i < by_free.size(); ++i) by_free[i] = i;
  std::stable_sort(by_free.begin(), by_free.end(),
                   [&](size_t a, size_t b) { return free[a] > free[b]; });
  // top[r]: the sum of the r largest free amounts.
  std::vector<uint64_t> top(nodes.size() + 1, 0);
  for (size_t r = 1; r <= nodes.size(); ++r) top[r] = top[r - 1] + free[by_free[r - 1]];
  size_t k = 1;
  while (k <= nodes.size() && top[k] < bytes) ++k;
  if (k > nodes.size()) return {};

  NumaMask greedy;
  for (size_t r = 0; r < k; ++r) greedy = greedy.With(nodes[by_free[r]]);
  std::vector<MemoryHint> hints{{greedy, true}};

  // Bounded: a pathological free-memory layout must not stall admission.
  constexpr int kSearchBudget = 100000;
  int steps = 0;
  std::function<void(size_t, size_t, uint64_t, NumaMask)> search =
      [&](size_t from, size_t chosen, uint64_t sum, NumaMask mask) {
        if (hints.size() >= kMaxPreferredHints || ++steps > kSearchBudget) return;
        if (chosen == k) {
          if (sum >= bytes && mask != greedy) hints.push_back({mask, true});
          return;
        }
        if (sum + top[k - chosen] < bytes) return;  // nothing left can reach `bytes`
        for (size_t i = from; i + (k - chosen) <= nodes.size(); ++i) {
          search(i + 1, chosen + 1, sum + free[i], mask.With(nodes[i]));
        }
      };
  search(0, 0, 0, NumaMask());
  if (allowed.Count() > static_cast<int>(k)) hints.push_back({allowed, false});
  return hints;
}

}  // namespace

Status CheckPlacement(const MemoryState& state, const qos::RoleTable& roles,
                      const PlacementSubject& who, NumaMask nodes) {
  std::string reason;
  if (BlockedNodes(state, roles, who, nodes, &reason).empty()) return Status::Ok();
  return ResourceExhaustedError(reason);
}

NumaMask AllowedNodes(const MemoryState& state, const qos::RoleTable& roles,
                      const PlacementSubject& who) {
  const NumaMask all = state.NodeMask();
  const NumaMask blocked = BlockedNodes(state, roles, who, all, nullptr);
  return NumaMask::FromBits(all.bits() & ~blocked.bits());
}

std::vector<MemoryHint> BoundHints(const MemoryState& state, NumaMask allowed, uint64_t bytes) {
  if (allowed.empty() || !Fits(state, allowed, bytes)) return {};
  std::vector<MemoryHint> hints = allowed.Count() <= kFullEnumerationNodes
                                      ? AllSubsetHints(state, allowed, bytes)
                                      : NarrowestHints(state, allowed, bytes);
  SortNarrowestFirst(hints);
  return hints;
}

StatusOr<std::map<int, uint64_t>> SplitOverNodes(const MemoryState& state, NumaMask nodes,
                                                 uint64_t bytes) {
  if (!Fits(state, nodes, bytes)) {
    std::string free;
    for (int n : nodes.Nodes()) free += fmt::format(" node{}={}", n, state.FreeOn(n));
    return ResourceExhaustedError(fmt::format("{} bytes do not fit on NUMA nodes \"{}\" (free:{})",
                                              bytes, nodes.ToString(), free));
  }
  std::map<int, uint64_t> split;
  uint64_t left = bytes;
  for (int n : nodes.Nodes()) {
    const uint64_t share = std::min(left, state.FreeOn(n));
    split[n] = share;
    left -= share;
  }
  return split;
}

}  // namespace qrm::memory
