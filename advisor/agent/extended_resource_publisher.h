// ExtendedResourcePublisher: qrm's plugin resources (qrm.io/nic, an author's
// example.com/widget) as extended resources of this node, so the scheduler can place pods
// that request them (docs/node-report.md, "Extended resources").
//
// Each check reads the Node (GET /api/v1/nodes/<name>), builds the JSON Patch of the
// differences (cluster/objects/node_extended_resources.h) and sends it only when something
// differs (PATCH .../status, application/json-patch+json). Checking every time instead of
// remembering what was written is what repairs a node the kubelet rewrote: it zeroes every
// extended resource when it re-registers the node (reconcileExtendedResource).
//
// What qrm published is remembered in a checkpoint file (checkpoint/checkpoint_file.h) in the
// advisor's state directory, so a restarted advisor still removes what a plugin that left
// while it was down had offered, and never removes a resource it did not publish (a device
// plugin's). A Node annotation would survive the loss of the state directory, but writing it
// needs PATCH on the node object itself (RBAC `nodes` patch: taints, labels,
// unschedulable), not just on its status, and a second request that can fail between the two
// writes; the file is local, atomic and needs nothing more. The file is written before a
// patch that adds (with the names about to be added) and after one that removes, so a crash
// at any point leaves it naming at least what the node holds of qrm's.
//
// Not thread-safe: the node reporter's writer thread owns it.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "api/admin_v1.pb.h"
#include "cluster/kube/kube_client.h"
#include "cluster/objects/node_extended_resources.h"
#include "common/status.h"

namespace qrm::advisor {

// The node's extended resources from qrm-host's GetAllocatable: each plugin resource with an
// extended resource name, with its allocatable amount as both capacity and allocatable,
// rounded down to a whole number (Kubernetes takes only integers for extended resources).
// Capacity is not the plugin's capacity because the kubelet sets every allocatable it does
// not own to the node's capacity at each status update (nodestatus.MachineInfo): a capacity
// above allocatable would be copied over it and hand the scheduler what the plugin reserves.
// The plugin's capacity stays in the NodeResourceTopology. `skipped` gets the names that are
// not extended resources (cpu, memory: the kubelet's; invalid names).
cluster::ExtendedResources ExtendedResourcesFrom(const admin::v1::GetAllocatableResponse& answer,
                                                 std::vector<std::string>* skipped);

struct ExtendedResourceCheck {
  bool patched = false;
  std::vector<std::string> added, changed, removed;
};

class ExtendedResourcePublisher {
 public:
  // `state_file`: where the published names are remembered; "" keeps them in memory only.
  ExtendedResourcePublisher(const kube::KubeClient& client, std::string node_name,
                            std::string state_file);

  // Makes the node offer `desired` (names already checked). Errors name the method, URL and
  // the server's answer, or the state file; the next check starts over.
  StatusOr<ExtendedResourceCheck> Check(const cluster::ExtendedResources& desired);
  // The names qrm publishes, as remembered.
  const std::set<std::string>& published() const { return published_; }

 private:
  void Load();
  Status Remember(const std::set<std::string>& names);
  StatusOr<std::string> ReadNode() const;

  const kube::KubeClient& client_;
  const std::string node_name_;
  const std::string state_file_;
  std::shared_ptr<spdlog::logger> log_;
  std::set<std::string> published_;
};

}  // namespace qrm::advisor
