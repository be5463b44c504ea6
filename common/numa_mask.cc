#include "common/numa_mask.h"

#include <algorithm>
#include <bit>

#include <fmt/format.h>

#include "common/id_list.h"

namespace qrm {

StatusOr<NumaMask> NumaMask::FromNodes(const std::vector<int64_t>& nodes) {
  uint64_t bits = 0;
  for (int64_t node : nodes) {
    if (node < 0 || node >= kMaxNodes) {
      return InvalidArgumentError(
          fmt::format("NUMA node id {} is outside the supported range [0, {})", node, kMaxNodes));
    }
    bits |= uint64_t{1} << node;
  }
  return NumaMask(bits);
}

StatusOr<NumaMask> NumaMask::Parse(std::string_view text, int max_nodes) {
  // A mask cannot hold more than kMaxNodes nodes whatever the caller asks for.
  const int max_id = std::clamp(max_nodes, 0, kMaxNodes) - 1;
  StatusOr<std::vector<IdRange>> ranges = ParseIdList(text, max_id, "NUMA node list");
  if (!ranges.ok()) return ranges.status();
  uint64_t bits = 0;
  for (const IdRange& r : *ranges) {
    const int width = r.last - r.first + 1;
    bits |= (width == kMaxNodes ? ~uint64_t{0} : (uint64_t{1} << width) - 1) << r.first;
  }
  return NumaMask(bits);
}

std::vector<int> NumaMask::Nodes() const {
  std::vector<int> nodes;
  nodes.reserve(static_cast<std::size_t>(Count()));
  for (uint64_t rest = bits_; rest != 0; rest &= rest - 1) nodes.push_back(std::countr_zero(rest));
  return nodes;
}

std::string NumaMask::ToString() const {
  return FormatIdList(Nodes());
}

}  // namespace qrm
