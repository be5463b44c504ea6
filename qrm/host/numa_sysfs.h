// Reads the machine's NUMA nodes and distances from sysfs for the topology
// manager: <root>/devices/system/node/online and node<N>/distance.
#pragma once

#include <string>

#include "common/status.h"
#include "qrm/topology/numa_info.h"

namespace qrm::host {

// `sysfs_root` is "/sys" on a real machine; tests point it at a fake tree. A
// machine without the node directory (NUMA disabled) is one node 0.
StatusOr<topology::NumaInfo> LoadNumaInfo(const std::string& sysfs_root);

}  // namespace qrm::host
