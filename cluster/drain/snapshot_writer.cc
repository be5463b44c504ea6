#include "cluster/drain/snapshot_writer.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "cluster/drain/in_tree_volumes.h"
#include "cluster/objects/json_io.h"
#include "cluster/objects/meta_time.h"

namespace qrm::cluster::drain {
namespace {

using json::Writer;

using json::WriteKey;
using json::WriteString;
using json::WriteStringIfSet;
using json::WriteStringMapIfSet;
using json::WriteStringValue;

// RFC 3339's years: 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z.
constexpr int64_t kMinTime = -62'167'219'200;
constexpr int64_t kMaxTime = 253'402'300'799;

// The decoder accepts a time whose offset takes it past year 0 or 9999 (as Go's parser does);
// no RFC 3339 text holds it, so it is written as the nearest one that reads back.
void TimeIfSet(Writer& w, std::string_view key, const std::optional<int64_t>& unix_seconds) {
  if (unix_seconds) WriteString(w, key, FormatTime(std::clamp(*unix_seconds, kMinTime, kMaxTime)));
}

// --- quantities -----------------------------------------------------------------------------

// Whole integers only, so that reading them back gives the same amounts exactly.
void ResourceList(Writer& w, const Resources& r, const int64_t* pods) {
  w.StartObject();
  if (r.cpu_milli != 0) WriteString(w, "cpu", std::to_string(r.cpu_milli) + "m");
  if (r.memory_bytes != 0) WriteString(w, "memory", std::to_string(r.memory_bytes));
  if (pods != nullptr) WriteString(w, "pods", std::to_string(*pods));
  // Written even when 0: the decoder keeps an extended resource it read, whatever its amount.
  for (const auto& [name, v] : r.extended) WriteString(w, name, std::to_string(v));
  w.EndObject();
}

// What the decoder makes of the containers alone: max(sum of containers, max of init
// containers), with the same extended keys.
Resources FromContainers(const DrainPod& pod) {
  Resources sum, init;
  for (const ContainerRequests& c : pod.containers) {
    sum.cpu_milli = SatAdd(sum.cpu_milli, c.requests.cpu_milli);
    sum.memory_bytes = SatAdd(sum.memory_bytes, c.requests.memory_bytes);
    for (const auto& [n, v] : c.requests.extended) sum.extended[n] = SatAdd(sum.extended[n], v);
  }
  for (const ContainerRequests& c : pod.init_containers) {
    init.cpu_milli = std::max(init.cpu_milli, c.requests.cpu_milli);
    init.memory_bytes = std::max(init.memory_bytes, c.requests.memory_bytes);
    for (const auto& [n, v] : c.requests.extended) init.extended[n] = std::max(init.extended[n], v);
  }
  sum.cpu_milli = std::max(sum.cpu_milli, init.cpu_milli);
  sum.memory_bytes = std::max(sum.memory_bytes, init.memory_bytes);
  for (const auto& [n, v] : init.extended) sum.extended[n] = std::max(sum.extended[n], v);
  return sum;
}

// The part of the pod's effective request its containers do not account for, which the
// decoder adds from spec.overhead (a RuntimeClass overhead, or a request set without
// containers). An extended resource the containers do not name is included even at 0, so the
// decoder gets the key back.
Resources Overhead(const DrainPod& pod) {
  const Resources base = FromContainers(pod);
  Resources extra;
  extra.cpu_milli = std::max<int64_t>(pod.requests.cpu_milli - base.cpu_milli, 0);
  extra.memory_bytes = std::max<int64_t>(pod.requests.memory_bytes - base.memory_bytes, 0);
  for (const auto& [name, v] : pod.requests.extended) {
    auto it = base.extended.find(name);
    if (it == base.extended.end()) {
      extra.extended[name] = v;
    } else if (v > it->second) {
      extra.extended[name] = v - it->second;
    }
  }
  return extra;
}

bool IsZero(const Resources& r) {
  return r.cpu_milli == 0 && r.memory_bytes == 0 && r.extended.empty();
}

// --- selectors ------------------------------------------------------------------------------

// `key`: [values...]; nothing when there are none (omitempty).
void StringArrayIfSet(Writer& w, std::string_view key, const std::vector<std::string>& values) {
  if (values.empty()) return;
  WriteKey(w, key);
  w.StartArray();
  for (const std::string& v : values) WriteStringValue(w, v);
  w.EndArray();
}

std::string_view OpText(const SelectorRequirement& r) {
  if (!r.op_text.empty()) return r.op_text;
  switch (r.op) {
    case SelectorOp::kIn: return "In";
    case SelectorOp::kNotIn: return "NotIn";
    case SelectorOp::kExists: return "Exists";
    case SelectorOp::kDoesNotExist: return "DoesNotExist";
    case SelectorOp::kGt: return "Gt";
    case SelectorOp::kLt: return "Lt";
    case SelectorOp::kUnknown: break;
  }
  return "";
}

void Requirements(Writer& w, const std::vector<SelectorRequirement>& list) {
  WriteKey(w, "matchExpressions");
  w.StartArray();
  for (const SelectorRequirement& r : list) {
    w.StartObject();
    WriteString(w, "key", r.key);
    WriteString(w, "operator", OpText(r));
    StringArrayIfSet(w, "values", r.values);
    w.EndObject();
  }
  w.EndArray();
}

// A metav1.LabelSelector under `key`; nothing when absent (absent and empty differ).
void Selector(Writer& w, std::string_view key, const std::optional<LabelSelector>& selector) {
  if (!selector) return;
  WriteKey(w, key);
  w.StartObject();
  WriteStringMapIfSet(w, "matchLabels", selector->match_labels);
  if (!selector->match_expressions.empty()) Requirements(w, selector->match_expressions);
  w.EndObject();
}

// --- nodes ----------------------------------------------------------------------------------

void NodeMetadata(Writer& w, const DrainNode& node) {
  WriteKey(w, "metadata");
  w.StartObject();
  WriteString(w, "name", node.name);
  WriteStringMapIfSet(w, "labels", node.labels);
  WriteStringMapIfSet(w, "annotations", node.annotations);
  w.EndObject();
}

void NodeSpec(Writer& w, const DrainNode& node) {
  WriteKey(w, "spec");
  w.StartObject();
  if (node.unschedulable) {
    WriteKey(w, "unschedulable");
    w.Bool(true);
  }
  if (!node.taints.empty()) {
    WriteKey(w, "taints");
    w.StartArray();
    for (const Taint& t : node.taints) {
      w.StartObject();
      WriteString(w, "key", t.key);
      WriteStringIfSet(w, "value", t.value);
      WriteString(w, "effect", t.effect);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

void WriteNode(Writer& w, const DrainNode& node) {
  w.StartObject();
  WriteString(w, "apiVersion", "v1");
  WriteString(w, "kind", "Node");
  NodeMetadata(w, node);
  NodeSpec(w, node);
  WriteKey(w, "status");
  w.StartObject();
  WriteKey(w, "allocatable");
  ResourceList(w, node.allocatable, &node.allocatable_pods);
  w.EndObject();
  w.EndObject();
}

// --- pods -----------------------------------------------------------------------------------

// ownerReferences[].apiVersion, which Kubernetes requires; the snapshot does not keep it, so
// it is the kind's usual group.
std::string_view OwnerApiVersion(std::string_view kind) {
  if (kind == "ReplicaSet" || kind == "StatefulSet" || kind == "DaemonSet" ||
      kind == "Deployment") {
    return "apps/v1";
  }
  if (kind == "Job" || kind == "CronJob") return "batch/v1";
  return "v1";
}

void Owners(Writer& w, const std::vector<OwnerReference>& owners) {
  if (owners.empty()) return;
  WriteKey(w, "ownerReferences");
  w.StartArray();
  for (const OwnerReference& o : owners) {
    w.StartObject();
    WriteString(w, "apiVersion", OwnerApiVersion(o.kind));
    WriteString(w, "kind", o.kind);
    WriteString(w, "name", o.name);
    WriteKey(w, "controller");
    w.Bool(o.controller);
    w.EndObject();
  }
  w.EndArray();
}

void PodMetadata(Writer& w, const DrainPod& pod) {
  WriteKey(w, "metadata");
  w.StartObject();
  WriteString(w, "name", pod.name);
  WriteStringIfSet(w, "namespace", pod.namespace_);
  WriteStringIfSet(w, "uid", pod.uid);
  TimeIfSet(w, "creationTimestamp", pod.creation_time);
  TimeIfSet(w, "deletionTimestamp", pod.deletion_time);
  WriteStringMapIfSet(w, "labels", pod.labels);
  WriteStringMapIfSet(w, "annotations", pod.annotations);
  Owners(w, pod.owners);
  w.EndObject();
}

void Containers(Writer& w, std::string_view key, const std::vector<ContainerRequests>& list,
                bool always) {
  if (list.empty() && !always) return;
  WriteKey(w, key);
  w.StartArray();
  for (const ContainerRequests& c : list) {
    w.StartObject();
    WriteString(w, "name", c.name);
    WriteKey(w, "resources");
    w.StartObject();
    WriteKey(w, "requests");
    ResourceList(w, c.requests, nullptr);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
}

// spec.csi, or the in-tree disk source, of a PersistentVolume's spec or a pod's volume.
void Disk(Writer& w, const AttachedDisk& disk) {
  if (disk.empty()) return;
  if (!disk.in_tree) {
    WriteKey(w, "csi");
    w.StartObject();
    WriteString(w, "driver", disk.driver);
    WriteString(w, "volumeHandle", disk.handle);
    w.EndObject();
    return;
  }
  std::optional<InTreeDiskSource> source = InTreeSourceOfPlugin(disk.driver);
  if (!source) return;  // only the decoder's sources are ever read in
  WriteKey(w, source->field);
  w.StartObject();
  WriteString(w, source->id_field, disk.handle);
  w.EndObject();
}

void Volumes(Writer& w, const std::vector<Volume>& volumes) {
  if (volumes.empty()) return;
  WriteKey(w, "volumes");
  w.StartArray();
  for (const Volume& v : volumes) {
    w.StartObject();
    WriteString(w, "name", v.name);
    switch (v.kind) {
      case VolumeKind::kEmptyDir:
        WriteKey(w, "emptyDir");
        w.StartObject();
        WriteStringIfSet(w, "medium", v.medium);
        w.EndObject();
        break;
      case VolumeKind::kHostPath:
        // The snapshot does not keep the path; only the kind matters to the drain rules.
        WriteKey(w, "hostPath");
        w.StartObject();
        w.EndObject();
        break;
      case VolumeKind::kPersistentVolumeClaim:
        WriteKey(w, "persistentVolumeClaim");
        w.StartObject();
        WriteString(w, "claimName", v.claim);
        w.EndObject();
        break;
      case VolumeKind::kEphemeral:
        // The claim template is not kept: the decoder needs only the source's presence.
        WriteKey(w, "ephemeral");
        w.StartObject();
        w.EndObject();
        break;
      case VolumeKind::kInTreeDisk: Disk(w, v.disk); break;
      case VolumeKind::kOther: break;  // a kind the decoder does not tell apart
    }
    w.EndObject();
  }
  w.EndArray();
}

void Tolerations(Writer& w, const std::vector<Toleration>& tolerations) {
  if (tolerations.empty()) return;
  WriteKey(w, "tolerations");
  w.StartArray();
  for (const Toleration& t : tolerations) {
    w.StartObject();
    WriteStringIfSet(w, "key", t.key);
    WriteStringIfSet(w, "operator", t.op);
    WriteStringIfSet(w, "value", t.value);
    WriteStringIfSet(w, "effect", t.effect);
    w.EndObject();
  }
  w.EndArray();
}

// nodeAffinity: {<required>: {nodeSelectorTerms: [...]}}, `required` being the pod's
// requiredDuringSchedulingIgnoredDuringExecution or the PersistentVolume's required.
void NodeAffinity(Writer& w, std::string_view required,
                  const std::vector<NodeSelectorTerm>& terms) {
  WriteKey(w, "nodeAffinity");
  w.StartObject();
  WriteKey(w, required);
  w.StartObject();
  WriteKey(w, "nodeSelectorTerms");
  w.StartArray();
  for (const NodeSelectorTerm& term : terms) {
    w.StartObject();
    Requirements(w, term.match_expressions);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();
}

void PodAffinityTerms(Writer& w, std::string_view kind, const std::vector<PodAffinityTerm>& terms) {
  WriteKey(w, kind);
  w.StartObject();
  WriteKey(w, "requiredDuringSchedulingIgnoredDuringExecution");
  w.StartArray();
  for (const PodAffinityTerm& term : terms) {
    w.StartObject();
    Selector(w, "labelSelector", term.selector);
    StringArrayIfSet(w, "namespaces", term.namespaces);
    WriteString(w, "topologyKey", term.topology_key);
    Selector(w, "namespaceSelector", term.namespace_selector);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

// spec.affinity: the required node affinity and the required pod (anti-)affinity terms.
void Affinity(Writer& w, const DrainPod& pod) {
  if (pod.required_affinity.empty() && pod.pod_affinity.empty() && pod.pod_anti_affinity.empty()) {
    return;
  }
  WriteKey(w, "affinity");
  w.StartObject();
  if (!pod.required_affinity.empty())
    NodeAffinity(w, "requiredDuringSchedulingIgnoredDuringExecution", pod.required_affinity);
  if (!pod.pod_affinity.empty()) PodAffinityTerms(w, "podAffinity", pod.pod_affinity);
  if (!pod.pod_anti_affinity.empty()) {
    PodAffinityTerms(w, "podAntiAffinity", pod.pod_anti_affinity);
  }
  w.EndObject();
}

void SpreadConstraints(Writer& w, const std::vector<TopologySpreadConstraint>& constraints) {
  if (constraints.empty()) return;
  WriteKey(w, "topologySpreadConstraints");
  w.StartArray();
  for (const TopologySpreadConstraint& c : constraints) {
    w.StartObject();
    WriteKey(w, "maxSkew");
    w.Int64(c.max_skew);
    WriteString(w, "topologyKey", c.topology_key);
    WriteString(w, "whenUnsatisfiable", c.when_unsatisfiable);
    Selector(w, "labelSelector", c.selector);
    if (c.min_domains) {
      WriteKey(w, "minDomains");
      w.Int64(*c.min_domains);
    }
    WriteStringIfSet(w, "nodeAffinityPolicy", c.node_affinity_policy_text);
    WriteStringIfSet(w, "nodeTaintsPolicy", c.node_taints_policy_text);
    StringArrayIfSet(w, "matchLabelKeys", c.match_label_keys);
    w.EndObject();
  }
  w.EndArray();
}

void PodSpec(Writer& w, const DrainPod& pod) {
  WriteKey(w, "spec");
  w.StartObject();
  WriteStringIfSet(w, "nodeName", pod.node_name);
  WriteKey(w, "priority");
  w.Int(pod.priority);
  if (pod.grace_period_seconds) {
    WriteKey(w, "terminationGracePeriodSeconds");
    w.Int64(*pod.grace_period_seconds);
  }
  Containers(w, "initContainers", pod.init_containers, false);
  Containers(w, "containers", pod.containers, true);  // Kubernetes requires the list
  if (Resources overhead = Overhead(pod); !IsZero(overhead)) {
    WriteKey(w, "overhead");
    ResourceList(w, overhead, nullptr);
  }
  Volumes(w, pod.volumes);
  WriteStringMapIfSet(w, "nodeSelector", pod.node_selector);
  Tolerations(w, pod.tolerations);
  Affinity(w, pod);
  SpreadConstraints(w, pod.spread);
  w.EndObject();
}

void WritePod(Writer& w, const DrainPod& pod) {
  w.StartObject();
  WriteString(w, "apiVersion", "v1");
  WriteString(w, "kind", "Pod");
  PodMetadata(w, pod);
  PodSpec(w, pod);
  WriteKey(w, "status");
  w.StartObject();
  WriteStringIfSet(w, "phase", pod.phase);
  w.EndObject();
  w.EndObject();
}

// --- the other objects ----------------------------------------------------------------------

// Opens an object and writes its apiVersion, kind and the metadata the snapshot keeps of it
// (name, namespace when set, labels when any); the caller writes the rest and closes it.
void OpenObject(Writer& w, std::string_view api_version, std::string_view kind,
                std::string_view name, std::string_view namespace_ = {},
                const std::map<std::string, std::string>& labels = {}) {
  w.StartObject();
  WriteString(w, "apiVersion", api_version);
  WriteString(w, "kind", kind);
  WriteKey(w, "metadata");
  w.StartObject();
  WriteString(w, "name", name);
  WriteStringIfSet(w, "namespace", namespace_);
  WriteStringMapIfSet(w, "labels", labels);
  w.EndObject();
}

void WritePdb(Writer& w, const DrainPdb& pdb) {
  OpenObject(w, "policy/v1", "PodDisruptionBudget", pdb.name, pdb.namespace_);
  WriteKey(w, "spec");
  w.StartObject();
  // Absent, not empty: policy/v1 reads an absent selector as matching no pod.
  Selector(w, "selector", pdb.selector);
  w.EndObject();
  WriteKey(w, "status");
  w.StartObject();
  WriteKey(w, "disruptionsAllowed");
  w.Int64(pdb.disruptions_allowed);
  w.EndObject();
  w.EndObject();
}

// controller_replicas keys are "namespace/Kind/name": a ReplicaSet or ReplicationController
// with only its replica count (what the decoder keeps of it).
void WriteController(Writer& w, const std::string& key, int64_t replicas) {
  const size_t first = key.find('/'), second = key.find('/', first + 1);
  if (first == std::string::npos || second == std::string::npos) return;
  const std::string kind = key.substr(first + 1, second - first - 1);
  OpenObject(w, kind == "ReplicaSet" ? "apps/v1" : "v1", kind, key.substr(second + 1),
             key.substr(0, first));
  WriteKey(w, "spec");
  w.StartObject();
  WriteKey(w, "replicas");
  w.Int64(replicas);
  w.EndObject();
  w.EndObject();
}

// A Namespace with its labels (what the decoder keeps of it).
void WriteNamespace(Writer& w, const std::string& name,
                    const std::map<std::string, std::string>& labels) {
  OpenObject(w, "v1", "Namespace", name, "", labels);
  w.EndObject();
}

void WriteClaim(Writer& w, const DrainClaim& claim) {
  OpenObject(w, "v1", "PersistentVolumeClaim", claim.name, claim.namespace_);
  WriteKey(w, "spec");
  w.StartObject();
  WriteStringIfSet(w, "storageClassName", claim.storage_class);
  WriteStringIfSet(w, "volumeName", claim.volume_name);
  w.EndObject();
  w.EndObject();
}

void WriteVolume(Writer& w, const DrainVolume& volume) {
  OpenObject(w, "v1", "PersistentVolume", volume.name, "", volume.labels);
  WriteKey(w, "spec");
  w.StartObject();
  Disk(w, volume.disk);
  if (!volume.node_affinity.empty()) NodeAffinity(w, "required", volume.node_affinity);
  w.EndObject();
  w.EndObject();
}

void WriteStorageClass(Writer& w, const DrainStorageClass& storage_class) {
  OpenObject(w, "storage.k8s.io/v1", "StorageClass", storage_class.name);
  WriteString(w, "provisioner", storage_class.provisioner);
  WriteString(w, "volumeBindingMode", storage_class.binding_mode);
  if (!storage_class.allowed_topologies.empty()) {
    WriteKey(w, "allowedTopologies");
    w.StartArray();
    for (const NodeSelectorTerm& term : storage_class.allowed_topologies) {
      w.StartObject();
      WriteKey(w, "matchLabelExpressions");
      w.StartArray();
      for (const SelectorRequirement& r : term.match_expressions) {
        w.StartObject();
        WriteString(w, "key", r.key);
        StringArrayIfSet(w, "values", r.values);  // the decoder refuses an empty list
        w.EndObject();
      }
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

void WriteCsiNode(Writer& w, const DrainCsiNode& csi_node) {
  OpenObject(w, "storage.k8s.io/v1", "CSINode", csi_node.name);
  WriteKey(w, "spec");
  w.StartObject();
  WriteKey(w, "drivers");
  w.StartArray();
  for (const auto& [driver, count] : csi_node.drivers) {
    w.StartObject();
    WriteString(w, "name", driver);
    if (count) {
      WriteKey(w, "allocatable");
      w.StartObject();
      WriteKey(w, "count");
      w.Int64(*count);
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();
}

}  // namespace

std::string WriteSnapshotJson(const ClusterSnapshot& snapshot) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  WriteString(w, "apiVersion", "v1");
  WriteString(w, "kind", "List");
  WriteKey(w, "items");
  w.StartArray();
  for (const DrainNode& node : snapshot.nodes) WriteNode(w, node);
  for (const DrainPod& pod : snapshot.pods) WritePod(w, pod);
  for (const DrainPdb& pdb : snapshot.pdbs) WritePdb(w, pdb);
  for (const auto& [key, replicas] : snapshot.controller_replicas)
    WriteController(w, key, replicas);
  for (const auto& [name, labels] : snapshot.namespaces) WriteNamespace(w, name, labels);
  for (const auto& [key, claim] : snapshot.claims) WriteClaim(w, claim);
  for (const auto& [name, volume] : snapshot.volumes) WriteVolume(w, volume);
  for (const auto& [name, storage_class] : snapshot.storage_classes)
    WriteStorageClass(w, storage_class);
  for (const auto& [name, csi_node] : snapshot.csi_nodes) WriteCsiNode(w, csi_node);
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string WritePodJson(const DrainPod& pod) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  WritePod(w, pod);
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace qrm::cluster::drain
