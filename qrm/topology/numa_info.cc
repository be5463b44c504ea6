#include "qrm/topology/numa_info.h"

#include <algorithm>
#include <bit>

#include <fmt/format.h>

namespace qrm::topology {

StatusOr<NumaInfo> NumaInfo::Create(std::vector<int> nodes,
                                    std::vector<std::vector<uint32_t>> distances) {
  if (nodes.empty()) return InvalidArgumentError("NUMA node list is empty");
  NumaInfo info;
  info.position_.assign(NumaMask::kMaxNodes, -1);
  uint64_t bits = 0;
  for (int node : nodes) {
    if (node < 0 || node >= NumaMask::kMaxNodes) {
      return InvalidArgumentError(fmt::format(
          "NUMA node id {} is outside the supported range [0, {})", node, NumaMask::kMaxNodes));
    }
    const uint64_t bit = uint64_t{1} << node;
    if ((bits & bit) != 0) {
      return InvalidArgumentError(fmt::format("NUMA node id {} is listed twice", node));
    }
    bits |= bit;
  }
  info.all_ = NumaMask::FromBits(bits);
  info.nodes_ = info.all_.Nodes();
  for (std::size_t i = 0; i < info.nodes_.size(); ++i) {
    info.position_[static_cast<std::size_t>(info.nodes_[i])] = static_cast<int8_t>(i);
  }

  if (!distances.empty()) {
    const std::size_t n = nodes.size();
    if (distances.size() != n) {
      return InvalidArgumentError(
          fmt::format("NUMA distance matrix has {} rows for {} nodes", distances.size(), n));
    }
    info.distances_.assign(n * n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      if (distances[i].size() != n) {
        return InvalidArgumentError(
            fmt::format("NUMA distance row of node {} has {} values for {} nodes", nodes[i],
                        distances[i].size(), n));
      }
      const auto row = static_cast<std::size_t>(info.position_[static_cast<std::size_t>(nodes[i])]);
      for (std::size_t j = 0; j < n; ++j) {
        const auto col =
            static_cast<std::size_t>(info.position_[static_cast<std::size_t>(nodes[j])]);
        info.distances_[row * n + col] = distances[i][j];
      }
    }
  }
  return info;
}

uint32_t NumaInfo::Distance(int from, int to) const {
  if (distances_.empty() || from < 0 || to < 0 || from >= NumaMask::kMaxNodes ||
      to >= NumaMask::kMaxNodes) {
    return 0;
  }
  const int a = position_[static_cast<std::size_t>(from)];
  const int b = position_[static_cast<std::size_t>(to)];
  if (a < 0 || b < 0) return 0;
  return distances_[static_cast<std::size_t>(a) * nodes_.size() + static_cast<std::size_t>(b)];
}

uint64_t NumaInfo::DistanceSum(NumaMask mask) const {
  if (distances_.empty()) return 0;
  const std::size_t n = nodes_.size();
  // Positions of the mask's nodes, then a plain double loop over the sub-matrix.
  int8_t pos[NumaMask::kMaxNodes];
  int count = 0;
  for (uint64_t rest = mask.bits() & all_.bits(); rest != 0; rest &= rest - 1) {
    pos[count++] = position_[static_cast<std::size_t>(std::countr_zero(rest))];
  }
  uint64_t sum = 0;
  for (int i = 0; i < count; ++i) {
    const uint32_t* row = &distances_[static_cast<std::size_t>(pos[i]) * n];
    for (int j = 0; j < count; ++j) sum += row[static_cast<std::size_t>(pos[j])];
  }
  return sum;
}

}  // namespace qrm::topology
