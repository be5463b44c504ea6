// Reads the nodes' NUMA state from what `kubectl get noderesourcetopologies -o json` prints (a
// NodeResourceTopologyList, a `kind: List` of them, or one object), as qrm-advisor publishes
// them (docs/node-report.md), into the planner's per-node NumaNodeState.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cluster/drain/numa_state.h"
#include "cluster/drain/snapshot_json.h"
#include "common/status.h"

namespace qrm::cluster::drain {

// Every document's NodeResourceTopologies by node name. kInvalidArgument naming the document,
// the item and the field for anything the NRT decoder or NumaNodeStateFromNrt refuses, and for
// two objects of one node. Errors are collected (up to kMaxReportedErrors) in one message, as
// the snapshot decoder's are.
StatusOr<std::map<std::string, NumaNodeState>> DecodeNumaStates(
    const std::vector<SnapshotDocument>& documents);

}  // namespace qrm::cluster::drain
