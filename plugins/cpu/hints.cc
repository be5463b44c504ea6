#include "plugins/cpu/hints.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "plugins/cpu/node_sets.h"

namespace qrm::cpu {
namespace {

// Per-node CPU counts, so that a node set's totals are a few additions.
struct NodeCounts {
  std::map<int, int> online;
  std::map<int, int> available;
  int Sum(const std::map<int, int>& counts, NumaMask mask) const {
    int sum = 0;
    for (int node : mask.Nodes()) {
      auto it = counts.find(node);
      if (it != counts.end()) sum += it->second;
    }
    return sum;
  }
};

NodeCounts CountPerNode(const CpuAvailability& avail) {
  NodeCounts counts;
  for (int node : avail.layout->cpu_nodes()) {
    const CpuSet& cpus = avail.layout->node_cpus().at(node);
    counts.online[node] = cpus.Size();
    counts.available[node] = cpus.Intersection(avail.available).Size();
  }
  return counts;
}

std::vector<NumaHint> UnboundHints(const CpuAvailability& avail, const DedicatedRequest& req) {
  std::vector<NumaHint> hints;
  if (!CheckKeepFree(avail, req.cpus).ok()) return hints;
  const NodeCounts counts = CountPerNode(avail);
  const std::vector<int>& nodes = avail.layout->cpu_nodes();
  // As the kubelet: the narrowest width whose CPUs could hold the request on an empty machine.
  int min_width = static_cast<int>(nodes.size());
  int budget = kMaxCandidateNodeSets;
  for (int width = 1; width <= static_cast<int>(nodes.size()); ++width) {
    const bool complete = ForEachNodeSet(nodes, width, &budget, [&](NumaMask mask) {
      if (counts.Sum(counts.online, mask) >= req.cpus) min_width = std::min(min_width, width);
      if (counts.Sum(counts.available, mask) >= req.cpus) hints.push_back({mask, false});
      return true;
    });
    if (!complete && !hints.empty()) break;
  }
  for (NumaHint& hint : hints) hint.preferred = hint.nodes.Count() == min_width;
  return hints;
}

std::vector<NumaHint> BoundHints(const CpuAvailability& avail, const qos::RoleTable& roles,
                                 const DedicatedRequest& req) {
  std::vector<NumaHint> hints;
  const std::vector<int>& nodes = avail.layout->cpu_nodes();
  int budget = kMaxCandidateNodeSets;
  for (int width = 1; width <= static_cast<int>(nodes.size()); ++width) {
    const bool complete = ForEachNodeSet(nodes, width, &budget, [&](NumaMask mask) {
      if (CheckNodeSet(avail, roles, req, mask).ok()) hints.push_back({mask, false});
      return true;
    });
    if (!complete && !hints.empty()) break;
  }
  if (!hints.empty()) {
    const int narrowest = hints.front().nodes.Count();  // enumerated narrowest first
    for (NumaHint& hint : hints) hint.preferred = hint.nodes.Count() == narrowest;
  }
  return hints;
}

}  // namespace

Status CheckKeepFree(const CpuAvailability& avail, int cpus) {
  const int left = avail.available.Size() - cpus;
  if (left >= avail.keep_free) return Status::Ok();
  return ResourceExhaustedError(fmt::format(
      "{} dedicated CPUs would leave {} of the {} free CPUs, but the reclaimed and shared pools "
      "need {}",
      cpus, std::max(left, 0), avail.available.Size(), avail.keep_free));
}

StatusOr<int> CheckNodeSet(const CpuAvailability& avail, const qos::RoleTable& roles,
                           const DedicatedRequest& req, NumaMask nodes) {
  for (const NodeClaim& claim : avail.claims) {
    const NumaMask shared = claim.nodes.And(nodes);
    if (shared.empty()) continue;
    if (claim.exclusive) {
      return ResourceExhaustedError(fmt::format("NUMA node(s) {} are held exclusively by {}",
                                                shared.ToString(), claim.holder));
    }
    if (req.numa_exclusive) {
      return ResourceExhaustedError(
          fmt::format("numa_exclusive needs NUMA node(s) {} to itself, but {} is bound there",
                      shared.ToString(), claim.holder));
    }
    if (roles.AntiAffine(req.role, claim.role)) {
      return ResourceExhaustedError(
          fmt::format("role \"{}\" is NUMA anti-affine with role \"{}\" of {} on node(s) {}",
                      req.role, claim.role, claim.holder, shared.ToString()));
    }
  }
  const CpuSet node_cpus = avail.layout->MaskCpus(nodes).Intersection(avail.allocatable);
  const CpuSet free = node_cpus.Intersection(avail.available);
  int takes = req.cpus;
  if (req.numa_exclusive) {
    if (free != node_cpus) {
      return ResourceExhaustedError(fmt::format(
          "numa_exclusive needs every CPU of node(s) {}, but {} are held by dedicated containers",
          nodes.ToString(), node_cpus.Difference(free).ToString()));
    }
    takes = node_cpus.Size();
  }
  if (free.Size() < req.cpus) {
    return ResourceExhaustedError(fmt::format("{} CPUs requested, node(s) {} have {} free ({})",
                                              req.cpus, nodes.ToString(), free.Size(),
                                              free.ToString()));
  }
  QRM_RETURN_IF_ERROR(CheckKeepFree(avail, takes));
  return takes;
}

std::vector<NumaHint> DedicatedHints(const CpuAvailability& avail, const qos::RoleTable& roles,
                                     const DedicatedRequest& req) {
  return req.numa_bound ? BoundHints(avail, roles, req) : UnboundHints(avail, req);
}

}  // namespace qrm::cpu
