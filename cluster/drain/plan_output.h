// How a drain plan is shown: JSON for tools (field names in the Kubernetes style, stable
// order) and a table for people.
#pragma once

#include <string>

#include "cluster/drain/executor.h"
#include "cluster/drain/planner.h"

namespace qrm::cluster::drain {

// One JSON object; the layout is documented in docs/drain.md ("Output").
std::string PlanJson(const Plan& plan);

// The nodes to act on, every move with its NUMA nodes, the nodes not drainable with reasons,
// PDB use and, for a NUMA-blind plan, the pods it would strand.
std::string PlanTable(const Plan& plan);

// What an execute did, node by node and pod by pod.
std::string ExecutionJson(const ExecuteReport& report);
std::string ExecutionTable(const ExecuteReport& report);

// A NUMA-blind plan next to qrm's for the same input: nodes each drains now, pods each
// strands (qrm's plan is admission-checked, so it strands none), and the pods that differ.
std::string ComparisonTable(const Plan& blind, const Plan& aware);

}  // namespace qrm::cluster::drain
