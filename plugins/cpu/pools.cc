#include "plugins/cpu/pools.h"

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>

namespace qrm::cpu {
namespace {

// `quota` CPUs of `from` on one node: whole cores first, then single threads, in `order`.
CpuSet TakeOnNode(const CpuLayout& layout, const CpuSet& from, int node, int quota,
                  TakeOrder order) {
  std::vector<const CoreInfo*> cores;
  for (const CoreInfo& core : layout.cores()) {
    if (core.node == node && core.threads.Overlaps(from)) cores.push_back(&core);
  }
  if (order == TakeOrder::kHighestFirst) std::reverse(cores.begin(), cores.end());
  CpuSet taken;
  for (const CoreInfo* core : cores) {
    if (quota < core->threads.Size()) break;
    if (core->threads.IsSubsetOf(from)) {
      taken = taken.Union(core->threads);
      quota -= core->threads.Size();
    }
  }
  std::vector<int> rest = from.Intersection(layout.NodeCpus(node)).Difference(taken).Ids();
  if (order == TakeOrder::kHighestFirst) std::reverse(rest.begin(), rest.end());
  for (int i = 0; i < quota && i < static_cast<int>(rest.size()); ++i) taken.Add(rest[i]);
  return taken;
}

}  // namespace

CpuSet TakeSpread(const CpuLayout& layout, const CpuSet& from, int count, TakeOrder order) {
  std::vector<int> nodes = layout.cpu_nodes();
  if (order == TakeOrder::kHighestFirst) std::reverse(nodes.begin(), nodes.end());
  std::map<int, int> left;  // CPUs of `from` not yet dealt, per node
  for (int node : nodes) left[node] = from.Intersection(layout.NodeCpus(node)).Size();

  // Deal whole-core units round robin until the count is reached or every node is empty.
  const int unit = layout.threads_per_core();
  std::map<int, int> quota;
  int remaining = count;
  bool dealt = true;
  while (remaining > 0 && dealt) {
    dealt = false;
    for (int node : nodes) {
      if (remaining == 0) break;
      const int give = std::min({unit, remaining, left[node]});
      if (give == 0) continue;
      quota[node] += give;
      left[node] -= give;
      remaining -= give;
      dealt = true;
    }
  }
  CpuSet taken;
  for (const auto& [node, q] : quota) taken = taken.Union(TakeOnNode(layout, from, node, q, order));
  return taken;
}

int MaxReclaimedSize(const CpuLayout& layout, const CpuSet& reserved, const CpuSet& dedicated) {
  const int free = layout.online().Difference(reserved).Difference(dedicated).Size();
  return std::max(0, free - kMinSharedCpus);
}

int AutoReclaimedSize(const CpuLayout& layout, const CpuSet& reserved, const CpuSet& dedicated,
                      bool reclaimed_work) {
  if (!reclaimed_work) return 0;
  const int free = layout.online().Difference(reserved).Difference(dedicated).Size();
  const int wanted = std::clamp(free / 4, 1, kAutoReclaimedMax);  // 2 CPUs: 1, 16 and more: 4
  return std::min(wanted, MaxReclaimedSize(layout, reserved, dedicated));
}

std::string ReclaimedSizeText(int setting) {
  return setting == kReclaimedAuto ? std::string("auto") : std::to_string(setting);
}

StatusOr<CpuPools> ComputePools(const CpuLayout& layout, const CpuSet& reserved,
                                const CpuSet& dedicated, int reclaimed_size) {
  const CpuSet free = layout.online().Difference(reserved).Difference(dedicated);
  if (reclaimed_size < 0) {
    return InvalidArgumentError(fmt::format("reclaimed: pool size {} is negative", reclaimed_size));
  }
  const int max = MaxReclaimedSize(layout, reserved, dedicated);
  if (reclaimed_size > max) {
    return InvalidArgumentError(fmt::format(
        "reclaimed: pool size {} is above {}: {} CPUs are neither reserved ({}) nor dedicated "
        "({}) and the shared pool keeps at least {}",
        reclaimed_size, max, free.Size(), reserved.ToString(), dedicated.ToString(),
        kMinSharedCpus));
  }
  CpuPools pools;
  pools.reserved = reserved;
  pools.dedicated = dedicated;
  pools.reclaimed = TakeSpread(layout, free, reclaimed_size, TakeOrder::kHighestFirst);
  pools.shared = free.Difference(pools.reclaimed);
  return pools;
}

}  // namespace qrm::cpu
