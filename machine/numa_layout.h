// NumaLayout: the NUMA node ids of a machine and the distances between them, read from sysfs
// alone. It is the part of discovery (discovery.h) the host needs for its topology manager
// and for checking plugin answers, and the part Discover builds its nodes on, so both read
// the same files the same way:
//   <sysfs>/devices/system/node/online (else .../possible, else the node<N> directories)
//   <sysfs>/devices/system/node/node<N>/distance (one value per node, in node order)
//   <sysfs>/devices/system/cpu/online (ReadOnlineCpus)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/cpu_set.h"
#include "common/numa_mask.h"
#include "common/status.h"

namespace qrm::machine {

struct NumaLayout {
  std::vector<int> nodes;  // ascending, at least one
  // distances[i][j] is the distance from nodes[i] to nodes[j]; empty when any node lacks its
  // distance file (partial distances would compare masks wrongly, so none are kept).
  std::vector<std::vector<int>> distances;

  NumaMask Mask() const;
};

// A machine without <sysfs>/devices/system/node (NUMA disabled in the kernel) is one node 0
// without distances. Malformed files are errors naming the file and the value.
StatusOr<NumaLayout> ReadNumaLayout(const std::string& sysfs_root);

// The node ids under `node_dir` (<sysfs>/devices/system/node), ascending: its online list,
// else its possible list, else its node<N> directories.
StatusOr<std::vector<int>> ReadNodeIds(const std::string& node_dir);

// node<N>/distance of `node_dir` as one value per entry of `node_ids`; nullopt when the file
// does not exist. Values outside 0-255 or a count that differs from the node count are
// errors naming the file.
StatusOr<std::optional<std::vector<int>>> ReadNodeDistances(const std::string& node_dir, int node,
                                                            const std::vector<int>& node_ids);

// <sysfs>/devices/system/cpu/online; missing or malformed is an error naming the file.
StatusOr<CpuSet> ReadOnlineCpus(const std::string& sysfs_root);

}  // namespace qrm::machine
