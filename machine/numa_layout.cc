#include "machine/numa_layout.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "machine/sysfs.h"

namespace qrm::machine {

NumaMask NumaLayout::Mask() const {
  NumaMask mask;
  for (int node : nodes) mask = mask.With(node);
  return mask;
}

StatusOr<std::vector<int>> ReadNodeIds(const std::string& node_dir) {
  for (const char* file : {"online", "possible"}) {
    const std::string path = node_dir + "/" + file;
    QRM_ASSIGN_OR_RETURN(std::optional<std::string> text, sysfs::ReadOptionalValue(path));
    if (!text.has_value()) continue;
    QRM_ASSIGN_OR_RETURN(std::vector<int> ids, sysfs::ParseNodeList(path, *text));
    if (ids.empty()) return InvalidArgumentError(fmt::format("{}: no NUMA nodes", path));
    return ids;
  }
  // Neither list: the node<M> directories themselves.
  QRM_ASSIGN_OR_RETURN(const std::vector<std::string> entries, sysfs::ListDir(node_dir));
  std::vector<int> ids;
  for (const std::string& name : entries) {
    if (!name.starts_with("node") || name.size() == 4) continue;
    auto id =
        sysfs::ParseUint(fmt::format("{}/{}", node_dir, name), std::string_view(name).substr(4));
    if (!id.ok()) continue;  // "node_foo": not a node directory
    if (*id >= static_cast<uint64_t>(NumaMask::kMaxNodes)) {
      return InvalidArgumentError(fmt::format("{}/{}: NUMA node {} is above the supported {}",
                                              node_dir, name, *id, NumaMask::kMaxNodes - 1));
    }
    ids.push_back(static_cast<int>(*id));
  }
  std::sort(ids.begin(), ids.end());
  if (ids.empty()) {
    return InvalidArgumentError(
        fmt::format("{}: no online or possible file and no node directories", node_dir));
  }
  return ids;
}

StatusOr<std::optional<std::vector<int>>> ReadNodeDistances(const std::string& node_dir, int node,
                                                            const std::vector<int>& node_ids) {
  const std::string path = fmt::format("{}/node{}/distance", node_dir, node);
  QRM_ASSIGN_OR_RETURN(std::optional<std::string> text, sysfs::ReadOptionalValue(path));
  if (!text.has_value()) return std::optional<std::vector<int>>();
  std::istringstream words(*text);
  std::vector<int> values;
  for (std::string word; words >> word;) {
    QRM_ASSIGN_OR_RETURN(const int64_t value, sysfs::ParseInt(path, word));
    if (value < 0 || value > 255) {
      return InvalidArgumentError(fmt::format("{}: distance \"{}\" is outside 0-255", path, word));
    }
    values.push_back(static_cast<int>(value));
  }
  // The kernel prints one distance per online node, in node order.
  if (values.size() != node_ids.size()) {
    return InvalidArgumentError(fmt::format("{}: value \"{}\" has {} distances for {} nodes", path,
                                            *text, values.size(), node_ids.size()));
  }
  return std::optional<std::vector<int>>(std::move(values));
}

StatusOr<NumaLayout> ReadNumaLayout(const std::string& sysfs_root) {
  const std::string node_dir = sysfs_root + "/devices/system/node";
  NumaLayout layout;
  if (!sysfs::IsDirectory(node_dir)) {
    layout.nodes = {0};
    return layout;
  }
  QRM_ASSIGN_OR_RETURN(layout.nodes, ReadNodeIds(node_dir));
  for (int node : layout.nodes) {
    QRM_ASSIGN_OR_RETURN(std::optional<std::vector<int>> row,
                         ReadNodeDistances(node_dir, node, layout.nodes));
    if (!row.has_value()) {
      layout.distances.clear();
      break;
    }
    layout.distances.push_back(std::move(*row));
  }
  return layout;
}

StatusOr<CpuSet> ReadOnlineCpus(const std::string& sysfs_root) {
  return sysfs::ReadCpuList(sysfs_root + "/devices/system/cpu/online");
}

}  // namespace qrm::machine
