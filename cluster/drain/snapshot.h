// What the drain planner reads of a cluster: nodes, pods and PodDisruptionBudgets, reduced to
// the fields the drainability rules and the fit checks use. Plain values: snapshot_json.h fills
// them from `kubectl get -o json` output and checks them; the planner forks copies of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/drain/saturating.h"

namespace qrm::cluster::drain {

// cpu, memory and extended resources ("nvidia.com/gpu", "hugepages-2Mi").
struct Resources {
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  std::map<std::string, int64_t> extended;  // whole units (Quantity::Value)
};

// spec.taints[]
struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute
};

// A label or node selector requirement's operator. kUnknown keeps input we could not read so
// that Validate can name it; it never matches.
enum class SelectorOp { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt, kUnknown };

struct SelectorRequirement {
  std::string key;
  SelectorOp op = SelectorOp::kUnknown;
  std::string op_text;  // the operator as written, for errors
  std::vector<std::string> values;

  auto operator<=>(const SelectorRequirement&) const = default;
};

struct DrainNode {
  std::string name;                                // metadata.name
  std::map<std::string, std::string> labels;       // metadata.labels
  std::map<std::string, std::string> annotations;  // metadata.annotations
  std::vector<Taint> taints;                       // spec.taints
  bool unschedulable = false;                      // spec.unschedulable
  Resources allocatable;                           // status.allocatable (cpu, memory, others)
  int64_t allocatable_pods = 0;                    // status.allocatable.pods
  std::optional<std::string> node_group;           // the node-group label, when one was named
};

// metadata.ownerReferences[]
struct OwnerReference {
  std::string kind;  // ReplicaSet, StatefulSet, DaemonSet, Job, ...
  std::string name;
  bool controller = false;  // .controller
};

// kEphemeral: a generic ephemeral volume, whose claim the ephemeral volume controller names
// "<pod name>-<volume name>". kInTreeDisk: one of the in-tree cloud disks the scheduler
// counts against a CSI driver's attach limit (in_tree_volumes.h).
enum class VolumeKind {
  kEmptyDir,
  kHostPath,
  kPersistentVolumeClaim,
  kEphemeral,
  kInTreeDisk,
  kOther
};

// A disk that is attached to the node it is used on: a CSI volume (driver, volumeHandle), or an
// in-tree cloud disk (its plugin, "kubernetes.io/aws-ebs", and its disk id). Empty when neither.
struct AttachedDisk {
  std::string driver;  // spec.csi.driver, or the in-tree plugin's name
  std::string handle;  // spec.csi.volumeHandle, or the in-tree disk id
  bool in_tree = false;

  bool empty() const { return driver.empty(); }
  bool operator==(const AttachedDisk&) const = default;
};

// spec.volumes[]
struct Volume {
  std::string name;
  VolumeKind kind = VolumeKind::kOther;
  std::string medium;  // emptyDir.medium ("" for disk, "Memory" for tmpfs)
  std::string claim;   // persistentVolumeClaim.claimName
  AttachedDisk disk;   // kInTreeDisk: the disk

  bool operator==(const Volume&) const = default;
};

// spec.tolerations[]
struct Toleration {
  std::string key;
  std::string op;  // "Equal" (the default) or "Exists"
  std::string value;
  std::string effect;  // "" tolerates every effect

  auto operator<=>(const Toleration&) const = default;
};

// spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[]
struct NodeSelectorTerm {
  std::vector<SelectorRequirement> match_expressions;

  auto operator<=>(const NodeSelectorTerm&) const = default;
};

// A metav1.LabelSelector: matchLabels and matchExpressions, all of which must hold.
struct LabelSelector {
  std::map<std::string, std::string> match_labels;
  std::vector<SelectorRequirement> match_expressions;

  bool operator==(const LabelSelector&) const = default;
};

// spec.affinity.podAffinity / podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[]
// (matchLabelKeys and mismatchLabelKeys are not read: the API server merges them into
// labelSelector when it admits the pod).
struct PodAffinityTerm {
  std::optional<LabelSelector> selector;  // labelSelector; absent matches no pod
  std::vector<std::string> namespaces;    // namespaces
  // namespaceSelector: absent selects no namespace beyond `namespaces`, empty selects all;
  // both absent and `namespaces` empty mean the pod's own namespace.
  std::optional<LabelSelector> namespace_selector;
  std::string topology_key;  // topologyKey

  bool operator==(const PodAffinityTerm&) const = default;
};

// spec.topologySpreadConstraints[]
struct TopologySpreadConstraint {
  int64_t max_skew = 0;                       // maxSkew
  std::string topology_key;                   // topologyKey
  std::string when_unsatisfiable;             // DoNotSchedule or ScheduleAnyway
  std::optional<LabelSelector> selector;      // labelSelector; absent matches no pod
  std::optional<int64_t> min_domains;         // minDomains
  bool honor_node_affinity = true;            // nodeAffinityPolicy: Honor (default) or Ignore
  bool honor_node_taints = false;             // nodeTaintsPolicy: Ignore (default) or Honor
  std::string node_affinity_policy_text;      // as written, for errors ("" when absent)
  std::string node_taints_policy_text;        // as written, for errors ("" when absent)
  std::vector<std::string> match_label_keys;  // matchLabelKeys

  bool operator==(const TopologySpreadConstraint&) const = default;
};

// spec.containers[] / spec.initContainers[]: a container's name and resources.requests.
struct ContainerRequests {
  std::string name;
  Resources requests;
};

struct DrainPod {
  std::string namespace_;                          // metadata.namespace
  std::string name;                                // metadata.name
  std::string uid;                                 // metadata.uid
  std::string node_name;                           // spec.nodeName ("" when pending)
  std::map<std::string, std::string> labels;       // metadata.labels
  std::map<std::string, std::string> annotations;  // metadata.annotations
  std::vector<OwnerReference> owners;              // metadata.ownerReferences
  std::string phase;                               // status.phase
  int32_t priority = 0;                            // spec.priority
  std::optional<int64_t> creation_time;            // metadata.creationTimestamp (Unix s)
  std::optional<int64_t> deletion_time;            // metadata.deletionTimestamp (Unix s)
  std::optional<int64_t> grace_period_seconds;     // spec.terminationGracePeriodSeconds
  // The pod's effective request, the kubelet's way: per resource
  // max(sum of spec.containers[], max of spec.initContainers[]) + spec.overhead.
  Resources requests;
  // Per container, for qrm's admission check (the topology manager works per container).
  std::vector<ContainerRequests> init_containers;
  std::vector<ContainerRequests> containers;
  std::vector<Volume> volumes;                       // spec.volumes
  std::map<std::string, std::string> node_selector;  // spec.nodeSelector
  std::vector<Toleration> tolerations;               // spec.tolerations
  std::vector<NodeSelectorTerm> required_affinity;   // ORed terms; empty: any node
  // spec.affinity.podAffinity / podAntiAffinity, the required terms (pod_affinity.h)
  std::vector<PodAffinityTerm> pod_affinity;
  std::vector<PodAffinityTerm> pod_anti_affinity;
  std::vector<TopologySpreadConstraint> spread;  // spec.topologySpreadConstraints
  bool is_mirror = false;                        // annotation kubernetes.io/config.mirror present
  // qrm's QoS of the pod as qos/ resolves it for qrm-host and the plugins: the katalyst
  // annotations (qos_level, memory_enhancement) or the pod role and the planner's role table.
  std::string pod_role;         // label katalyst.kubewharf.io/pod_role, else kubernetes.io/pod-role
  std::string qos_level;        // the level asked for; "" when none is (shared_cores)
  bool numa_binding = false;    // memory_enhancement or the role's numa_binding
  bool numa_exclusive = false;  // ... numa_exclusive
  // The roles the role table makes NUMA anti-affine with pod_role (qos::RoleTable::AntiAffine),
  // and whether every other role is ("*"): a NUMA-bound pod never shares a zone with them.
  std::vector<std::string> anti_affine_roles;
  bool anti_affine_to_all_roles = false;
  // Why the QoS does not resolve (an unknown level or role, a malformed memory_enhancement);
  // "" when it does. qrm-host would refuse the pod, so it goes only to nodes qrm does not run.
  std::string qos_error;

  std::string Key() const { return namespace_ + "/" + name; }
  // Succeeded or Failed: it holds nothing and no scheduler filter counts it.
  bool Terminal() const { return phase == "Succeeded" || phase == "Failed"; }
  // The owner reference with controller: true, or null.
  const OwnerReference* Controller() const {
    for (const OwnerReference& o : owners)
      if (o.controller) return &o;
    return nullptr;
  }
};

// The claim a volume of the pod uses: persistentVolumeClaim.claimName, or the one the ephemeral
// volume controller makes for an ephemeral volume, "<pod name>-<volume name>"; "" for others.
inline std::string ClaimNameOf(const DrainPod& pod, const Volume& volume) {
  if (volume.kind == VolumeKind::kPersistentVolumeClaim) return volume.claim;
  if (volume.kind == VolumeKind::kEphemeral) return pod.name + "-" + volume.name;
  return "";
}

// Whether `labels` satisfy one requirement (Gt/Lt compare integers, as node selectors do).
bool RequirementMatches(const SelectorRequirement& r,
                        const std::map<std::string, std::string>& labels);
// An empty selector matches every pod (policy/v1 semantics).
bool SelectorMatches(const LabelSelector& s, const std::map<std::string, std::string>& labels);

struct DrainPdb {
  std::string namespace_;  // metadata.namespace
  std::string name;        // metadata.name
  // spec.selector; policy/v1: absent (null) matches no pod, empty matches every pod.
  std::optional<LabelSelector> selector;
  int64_t disruptions_allowed = 0;  // status.disruptionsAllowed

  std::string Key() const { return namespace_ + "/" + name; }
  // Same namespace and the selector matches the pod's labels.
  bool Matches(const DrainPod& pod) const {
    return pod.namespace_ == namespace_ && selector && SelectorMatches(*selector, pod.labels);
  }
};

// A PersistentVolumeClaim: the volume it is bound to, and its class (what an unbound claim
// will be provisioned by).
struct DrainClaim {
  std::string namespace_;   // metadata.namespace
  std::string name;         // metadata.name
  std::string volume_name;  // spec.volumeName ("" while unbound)
  // The annotation volume.beta.kubernetes.io/storage-class when present (it takes precedence,
  // as for the scheduler), else spec.storageClassName; "" for none.
  std::string storage_class;

  std::string Key() const { return namespace_ + "/" + name; }
  bool operator==(const DrainClaim&) const = default;
};

// A PersistentVolume: where it can be used (volume_topology.h).
struct DrainVolume {
  std::string name;                             // metadata.name
  std::map<std::string, std::string> labels;    // metadata.labels (the zone and region ones)
  std::vector<NodeSelectorTerm> node_affinity;  // spec.nodeAffinity.required.nodeSelectorTerms
  AttachedDisk disk;  // spec.csi, or one of the in-tree cloud disk sources (in_tree_volumes.h)

  bool operator==(const DrainVolume&) const = default;
};

// A StorageClass (storage.k8s.io/v1): what provisions its unbound claims.
struct DrainStorageClass {
  std::string name;         // metadata.name
  std::string provisioner;  // provisioner
  std::string
      binding_mode;  // volumeBindingMode: "Immediate" (the default) or "WaitForFirstConsumer"
  // allowedTopologies[].matchLabelExpressions[] as node selector terms (each expression an In).
  std::vector<NodeSelectorTerm> allowed_topologies;

  bool operator==(const DrainStorageClass&) const = default;
};

// A CSINode (storage.k8s.io/v1, named after its node): how many volumes each CSI driver can
// attach there. A driver without spec.drivers[].allocatable.count has no limit.
struct DrainCsiNode {
  std::string name;  // metadata.name, the node's
  std::map<std::string, std::optional<int64_t>>
      drivers;  // spec.drivers[]: name -> allocatable.count

  bool operator==(const DrainCsiNode&) const = default;
};

struct ClusterSnapshot {
  std::vector<DrainNode> nodes;
  std::vector<DrainPod> pods;
  std::vector<DrainPdb> pdbs;
  // spec.replicas of ReplicationControllers and ReplicaSets, keyed "namespace/Kind/name", for
  // the replica-count rule; kubectl's pod, node and PDB lists do not carry it, so it is empty
  // unless a caller fills it.
  std::map<std::string, int64_t> controller_replicas;
  // Namespace name -> metadata.labels, for the namespaceSelector of pod affinity terms; empty
  // unless the input lists Namespaces.
  std::map<std::string, std::map<std::string, std::string>> namespaces;
  // PersistentVolumeClaims by namespace/name and PersistentVolumes by name, for the volume
  // topology check; the flags say the input had each (the check needs both, else it is off).
  std::map<std::string, DrainClaim> claims;
  std::map<std::string, DrainVolume> volumes;
  bool claims_listed = false;
  bool volumes_listed = false;
  bool VolumesKnown() const { return claims_listed && volumes_listed; }
  // StorageClasses by name and CSINodes by node name, for the volume attach limits
  // (volume_limits.h); each is optional (without CSINodes only the nodes' own
  // attachable-volumes-csi-* allocatable limits apply).
  std::map<std::string, DrainStorageClass> storage_classes;
  std::map<std::string, DrainCsiNode> csi_nodes;

  // Indexes into the vectors above; Reindex() rebuilds them after the vectors change.
  std::map<std::string, size_t> node_index;                 // node name
  std::map<std::string, size_t> pod_index;                  // namespace/name
  std::map<std::string, std::vector<size_t>> pods_by_node;  // spec.nodeName -> pods
  std::map<std::string, std::vector<size_t>> pdbs_by_ns;    // namespace -> PDBs

  void Reindex();
  const DrainNode* FindNode(const std::string& name) const;
  // The PDBs whose selector matches the pod.
  std::vector<const DrainPdb*> PdbsFor(const DrainPod& pod) const;
};

}  // namespace qrm::cluster::drain
