// The planner's input read from a live API server instead of `kubectl get -o json` dumps: the
// nodes, the pods, the PodDisruptionBudgets and, when the CRD is installed, the
// NodeResourceTopologies qrm-advisor reports.
//
// Every collection is listed in pages (limit and continue, as client-go's pager does), so a big
// cluster is never one huge answer; a continue token that expired restarts that collection's
// list. Each page is handed on as the server's JSON text, unchanged: the snapshot decoders
// read a NodeList, PodList or PodDisruptionBudgetList, numa_inputs a
// NodeResourceTopologyList. A page is named after its request ("GET /api/v1/pods (page 2)"),
// so a decoding error says where the object came from.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/drain/snapshot_json.h"
#include "cluster/kube/kube_client.h"
#include "common/status.h"

namespace qrm::cluster::drain {

inline constexpr std::string_view kNodesPath = "/api/v1/nodes";
inline constexpr std::string_view kPodsPath = "/api/v1/pods";
inline constexpr std::string_view kPdbsPath = "/apis/policy/v1/poddisruptionbudgets";
// Their replica counts drive the replica-count rule (--min-replica-count), as CA's listers do.
inline constexpr std::string_view kReplicaSetsPath = "/apis/apps/v1/replicasets";
inline constexpr std::string_view kReplicationControllersPath = "/api/v1/replicationcontrollers";
// Their labels decide the namespaceSelector of pod affinity terms.
inline constexpr std::string_view kNamespacesPath = "/api/v1/namespaces";
// Where a pod's bound volumes let it go (volume_topology.h).
inline constexpr std::string_view kClaimsPath = "/api/v1/persistentvolumeclaims";
inline constexpr std::string_view kVolumesPath = "/api/v1/persistentvolumes";
// How many volumes each node takes per CSI driver, and what provisions unbound claims
// (volume_limits.h).
inline constexpr std::string_view kCsiNodesPath = "/apis/storage.k8s.io/v1/csinodes";
inline constexpr std::string_view kStorageClassesPath = "/apis/storage.k8s.io/v1/storageclasses";
inline constexpr std::string_view kTopologiesPath =
    "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies";

struct LiveReadOptions {
  int64_t page_size = 500;  // client-go's pager default
  // A continue token can expire between two pages (the API server compacted past the
  // list's snapshot); the collection's list starts again at most this many times.
  int max_list_restarts = 3;
};

struct LiveDocuments {
  // Node, pod, PDB, ReplicaSet, ReplicationController, Namespace, PersistentVolumeClaim,
  // PersistentVolume, CSINode and StorageClass list pages, for DecodeSnapshot.
  std::vector<SnapshotDocument> snapshot;
  std::vector<SnapshotDocument> topology;  // NodeResourceTopologyList pages; none without the CRD
};

// Every page of the collection at `path` (cluster scoped, or every namespace). An error for any
// answer but 2xx, naming the request, the code and the server's message.
StatusOr<std::vector<SnapshotDocument>> ListPages(const kube::KubeClient& client,
                                                  std::string_view path,
                                                  const LiveReadOptions& options = {});

// Nodes, pods, PDBs, ReplicaSets and ReplicationControllers; Namespaces,
// PersistentVolumeClaims, PersistentVolumes, CSINodes and StorageClasses (each optional: a 403
// leaves it out, logged); then the NodeResourceTopologies: a 404
// for those means the CRD is not installed, so no node has NUMA state (logged, not an error).
StatusOr<LiveDocuments> ReadLiveDocuments(const kube::KubeClient& client,
                                          const LiveReadOptions& options = {});

}  // namespace qrm::cluster::drain
