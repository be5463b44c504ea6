// What qrm-drain-planner plans from: the snapshot and the NUMA state (files or the API
// server), and the state file between passes.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "cluster/drain/numa_state.h"
#include "cluster/drain/planner.h"
#include "cluster/drain/snapshot.h"
#include "cluster/kube/kube_client.h"
#include "cmd/qrm-drain-planner/planner_flags.h"
#include "common/status.h"

namespace qrm::drain_cmd {

struct PlannerInput {
  cluster::drain::ClusterSnapshot snapshot;
  std::map<std::string, cluster::drain::NumaNodeState> numa;
};

// The --input files, or with none the API server through `client`. Every document is decoded
// before anything is planned; one error fails the input (messages name file, item, field).
// NodeResourceTopologies of nodes the snapshot lacks (a node deleted, its NRT not yet) are
// dropped with a warning in live mode and refused offline, where the files should agree.
StatusOr<PlannerInput> ReadPlannerInput(const PlannerConfig& config,
                                        const kube::KubeClient* client);

// The --state file; none yet (the first pass) is an empty state.
StatusOr<cluster::drain::PlannerState> ReadStateFile(const std::string& path);
// Replaces the --state file atomically.
Status WriteStateFile(const std::string& path, const cluster::drain::PlannerState& state);

}  // namespace qrm::drain_cmd
