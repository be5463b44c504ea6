// Reads a cluster snapshot from what `kubectl get nodes -o json`, `kubectl get pods -A -o json`
// and `kubectl get pdb -A -o json` print (NodeList, PodList, PodDisruptionBudgetList, or a
// `kind: List` mixing their items), and checks that the pieces agree with each other.
//
// The planner never plans from input it could not read: one bad object fails the whole input.
// Every error names the object and the field ("pod default/web-1:
// spec.containers[0].resources.requests.cpu: \"-1\" is negative"); up to kMaxReportedErrors
// of them are collected into one message so that a broken dump is fixed in one pass.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/drain/snapshot.h"
#include "common/status.h"
#include "qos/qos_requirement.h"

namespace qrm::cluster::drain {

inline constexpr size_t kMaxReportedErrors = 20;

struct DecodeOptions {
  // The node label whose value is the node's group (e.g. "eks.amazonaws.com/nodegroup");
  // empty: nodes have no group, so no minimum group size applies.
  std::string node_group_label;
  // Live mode: a pod bound to a node the snapshot lacks (the node was deleted and the pod
  // garbage collector has not removed its pods yet) is left out, with a log line, instead of
  // failing the input. Offline the files should agree, so it is an error.
  bool drop_pods_of_missing_nodes = false;
  // The operator's role table (the plugins' --roles-file): pod roles resolve to QoS levels
  // through it, as on the nodes. Empty: a pod with a role does not resolve (DrainPod::qos_error).
  qos::RoleTable roles;
};

// One input document and the name errors give it (a file name, "stdin").
struct SnapshotDocument {
  std::string name;
  std::string json;
};

// Appends the items of one document to *snapshot (indexes are not rebuilt).
Status DecodeDocument(const SnapshotDocument& document, const DecodeOptions& options,
                      ClusterSnapshot* snapshot);

// Decodes every document, rebuilds the indexes and runs Validate.
StatusOr<ClusterSnapshot> DecodeSnapshot(const std::vector<SnapshotDocument>& documents,
                                         const DecodeOptions& options);

// The consistency checks no single object shows: duplicate names, a pod bound to a node the
// snapshot lacks, selector operators Kubernetes would refuse. Needs current indexes.
Status Validate(const ClusterSnapshot& snapshot);

}  // namespace qrm::cluster::drain
