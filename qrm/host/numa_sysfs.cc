#include "qrm/host/numa_sysfs.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/id_list.h"

namespace qrm::host {
namespace {

StatusOr<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError(fmt::format("cannot read {}", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

StatusOr<topology::NumaInfo> LoadNumaInfo(const std::string& sysfs_root) {
  const std::string dir = sysfs_root + "/devices/system/node";
  auto online = ReadSmallFile(dir + "/online");
  if (!online.ok()) return topology::NumaInfo::Create({0});
  auto mask = NumaMask::Parse(TrimSysfsValue(*online));
  if (!mask.ok()) return mask.status().WithContext(dir + "/online");
  const std::vector<int> nodes = mask->Nodes();
  std::vector<std::vector<uint32_t>> distances;
  for (int node : nodes) {
    auto text = ReadSmallFile(fmt::format("{}/node{}/distance", dir, node));
    if (!text.ok()) {
      distances.clear();  // partial information is no information
      break;
    }
    std::istringstream in(*text);
    std::vector<uint32_t> row;
    for (uint32_t d; in >> d;) row.push_back(d);
    distances.push_back(std::move(row));
  }
  auto info = topology::NumaInfo::Create(nodes, distances);
  if (!info.ok()) return info.status().WithContext(dir);
  return info;
}

}  // namespace qrm::host
