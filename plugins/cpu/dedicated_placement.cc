#include "plugins/cpu/dedicated_placement.h"

#include <fmt/format.h>

#include "plugins/cpu/exclusive_cpus.h"

namespace qrm::cpu {
namespace {

StatusOr<DedicatedPlacement> PlaceBound(const CpuAvailability& avail, const qos::RoleTable& roles,
                                        const DedicatedRequest& req, NumaMask hint) {
  if (hint.empty()) {
    for (const NumaHint& h : DedicatedHints(avail, roles, req)) {
      if (h.preferred) {
        hint = h.nodes;
        break;
      }
    }
    if (hint.empty()) {
      return ResourceExhaustedError(
          fmt::format("no NUMA node set can take {} NUMA-bound CPUs now (free: {})", req.cpus,
                      avail.available.ToString()));
    }
  }
  StatusOr<int> takes = CheckNodeSet(avail, roles, req, hint);
  if (!takes.ok()) return takes.status();
  const CpuSet node_cpus = avail.layout->MaskCpus(hint).Intersection(avail.available);
  DedicatedPlacement placement;
  placement.numa_nodes = hint;
  if (req.numa_exclusive) {
    placement.cpus = node_cpus;  // CheckNodeSet verified these are all the allocatable ones
    return placement;
  }
  StatusOr<CpuSet> cpus = TakeExclusiveCpus(*avail.layout, node_cpus, req.cpus);
  if (!cpus.ok()) return cpus.status();
  placement.cpus = *cpus;
  return placement;
}

StatusOr<DedicatedPlacement> PlaceUnbound(const CpuAvailability& avail, const DedicatedRequest& req,
                                          NumaMask hint) {
  QRM_RETURN_IF_ERROR(CheckKeepFree(avail, req.cpus));
  CpuSet taken;
  if (!hint.empty()) {
    const CpuSet aligned = avail.layout->MaskCpus(hint).Intersection(avail.available);
    StatusOr<CpuSet> first =
        TakeExclusiveCpus(*avail.layout, aligned, std::min(req.cpus, aligned.Size()));
    if (!first.ok()) return first.status();
    taken = *first;
  }
  StatusOr<CpuSet> rest =
      TakeExclusiveCpus(*avail.layout, avail.available.Difference(taken), req.cpus - taken.Size());
  if (!rest.ok()) return rest.status();
  DedicatedPlacement placement;
  placement.cpus = taken.Union(*rest);
  return placement;
}

}  // namespace

StatusOr<DedicatedPlacement> PlaceDedicated(const CpuAvailability& avail,
                                            const qos::RoleTable& roles,
                                            const DedicatedRequest& req, NumaMask hint) {
  // Memory-only nodes in a hint are fine (the memory plugin uses them; CPUs come from the
  // others), but a hint with no CPU node at all cannot place anything.
  if (!hint.empty() && hint.And(avail.layout->cpu_node_mask()).empty()) {
    return InvalidArgumentError(
        fmt::format("hint.nodes: {}: none of these NUMA nodes has CPUs (nodes with CPUs: {})",
                    hint.ToString(), avail.layout->cpu_node_mask().ToString()));
  }
  return req.numa_bound ? PlaceBound(avail, roles, req, hint) : PlaceUnbound(avail, req, hint);
}

std::optional<DedicatedPlacement> PlacePrevious(const CpuAvailability& avail,
                                                const qos::RoleTable& roles,
                                                const DedicatedRequest& req,
                                                const CpuSet& previous) {
  if (previous.Empty() || !previous.IsSubsetOf(avail.available)) return std::nullopt;
  DedicatedPlacement placement;
  placement.cpus = previous;
  if (req.numa_bound) {
    placement.numa_nodes = avail.layout->NodesOf(previous);
    StatusOr<int> takes = CheckNodeSet(avail, roles, req, placement.numa_nodes);
    if (!takes.ok() || *takes != previous.Size()) return std::nullopt;
    return placement;
  }
  if (previous.Size() != req.cpus || !CheckKeepFree(avail, req.cpus).ok()) return std::nullopt;
  return placement;
}

}  // namespace qrm::cpu
