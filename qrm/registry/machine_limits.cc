#include "qrm/registry/machine_limits.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/id_list.h"

namespace qrm::host {
namespace {

std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

StatusOr<MachineLimits> LoadMachineLimits(const std::string& sysfs_root) {
  MachineLimits limits;
  const std::string cpu_file = sysfs_root + "/devices/system/cpu/online";
  const std::optional<std::string> cpus = ReadSmallFile(cpu_file);
  if (!cpus) return NotFoundError(fmt::format("cannot read the online CPUs from {}", cpu_file));
  auto cpu_set = CpuSet::Parse(TrimSysfsValue(*cpus));
  if (!cpu_set.ok()) return cpu_set.status().WithContext(cpu_file);
  limits.online_cpus = *cpu_set;

  const std::string node_file = sysfs_root + "/devices/system/node/online";
  const std::optional<std::string> nodes = ReadSmallFile(node_file);
  if (!nodes) {
    limits.numa_nodes = NumaMask::FromBits(1);
    return limits;
  }
  auto mask = NumaMask::Parse(TrimSysfsValue(*nodes));
  if (!mask.ok()) return mask.status().WithContext(node_file);
  limits.numa_nodes = *mask;
  return limits;
}

}  // namespace qrm::host
