// NumaInfo: the NUMA nodes of a machine and, optionally, the distances between them.
//
// It is the "default affinity" every topology hint is merged against (the kubelet's NUMAInfo):
// the set of node ids, which may be sparse (e.g. {0, 2, 5}), and the distance matrix the
// prefer-closest-numa-nodes option compares masks by.
#pragma once

#include <cstdint>
#include <vector>

#include "common/numa_mask.h"
#include "common/status.h"

namespace qrm::topology {

class NumaInfo {
 public:
  // `nodes`: distinct node ids in [0, 64), at least one, in any order.
  // `distances`: empty (no distance information), or a square matrix with one row and one
  // column per entry of `nodes`, in the order of `nodes`: distances[i][j] is the distance from
  // node nodes[i] to node nodes[j]. Listing the online nodes in ascending order makes row i the
  // contents of /sys/devices/system/node/node<nodes[i]>/distance, which holds one value per
  // online node, in ascending id order.
  // Fails with kInvalidArgument naming the offending id or row.
  static StatusOr<NumaInfo> Create(std::vector<int> nodes,
                                   std::vector<std::vector<uint32_t>> distances = {});

  // Every node of the machine: the affinity of a "nil" (any node) hint.
  NumaMask DefaultAffinity() const { return all_; }
  // The node ids in ascending order.
  const std::vector<int>& nodes() const { return nodes_; }
  bool has_distances() const { return !distances_.empty(); }
  // Distance between two node ids of this machine; 0 without distance information or for an
  // id that is not one of nodes().
  uint32_t Distance(int from, int to) const;
  // Sum of Distance(a, b) over every ordered pair (a, b) of nodes of `mask` (a == b included),
  // nodes outside the machine ignored. Dividing by Count()^2 gives the kubelet's average
  // distance; for masks of equal width the sums order exactly as the averages do.
  uint64_t DistanceSum(NumaMask mask) const;

 private:
  NumaInfo() = default;

  NumaMask all_;
  std::vector<int> nodes_;
  // Row-major, indexed by position in nodes_; empty without distance information.
  std::vector<uint32_t> distances_;
  // Position of each node id in nodes_, -1 for ids that are not nodes of this machine.
  std::vector<int8_t> position_;
};

}  // namespace qrm::topology
