#include "cluster/drain/snapshot_json.h"

#include <algorithm>
#include <limits>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "cluster/drain/error_list.h"
#include "cluster/drain/pod_affinity_json.h"
#include "cluster/drain/selector_json.h"
#include "cluster/drain/storage_json.h"
#include "cluster/drain/volume_json.h"
#include "cluster/objects/json_io.h"
#include "cluster/objects/object_meta.h"
#include "common/log.h"
#include "common/protocol_keys.h"
#include "common/quote.h"

namespace qrm::cluster::drain {
namespace {

using json::Field;

void Add(Resources* into, const Resources& r) {
  into->cpu_milli = SatAdd(into->cpu_milli, r.cpu_milli);
  into->memory_bytes = SatAdd(into->memory_bytes, r.memory_bytes);
  for (const auto& [name, v] : r.extended) into->extended[name] = SatAdd(into->extended[name], v);
}

void Max(Resources* into, const Resources& r) {
  into->cpu_milli = std::max(into->cpu_milli, r.cpu_milli);
  into->memory_bytes = std::max(into->memory_bytes, r.memory_bytes);
  for (const auto& [name, v] : r.extended) into->extended[name] = std::max(into->extended[name], v);
}

StatusOr<bool> Bool(const Field& f) {
  if (!f.value->IsBool()) return InvalidArgumentError(fmt::format("{}: not a boolean", f.path));
  return f.value->GetBool();
}

// A core/v1 ResourceList; cpu in millicores, everything else in whole units. `pods`, when
// given, receives the "pods" entry instead of `extended`.
Status ReadResourceList(const Field& list, Resources* out, int64_t* pods) {
  return json::ForEachMember(list, [&](std::string_view name, const Field& f) -> Status {
    QRM_ASSIGN_OR_RETURN(Quantity q, json::NonNegativeQuantity(f));
    if (name == "cpu") {
      out->cpu_milli = SatAdd(out->cpu_milli, q.MilliValue());
    } else if (name == "memory") {
      out->memory_bytes = SatAdd(out->memory_bytes, q.Value());
    } else if (name == "pods" && pods != nullptr) {
      *pods = q.Value();
    } else {
      out->extended[std::string(name)] = SatAdd(out->extended[std::string(name)], q.Value());
    }
    return Status::Ok();
  });
}

StatusOr<Resources> ContainerResourceRequests(const Field& container) {
  Resources r;
  QRM_ASSIGN_OR_RETURN(std::optional<Field> resources, json::Member(container, "resources"));
  if (!resources) return r;
  QRM_ASSIGN_OR_RETURN(std::optional<Field> requests, json::Member(*resources, "requests"));
  if (requests) QRM_RETURN_IF_ERROR(ReadResourceList(*requests, &r, nullptr));
  return r;
}

// spec.<key>[]: each container's name and requests.
Status ReadContainers(const Field& spec, const char* key, std::vector<ContainerRequests>* out) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> list, json::Member(spec, key));
  if (!list) return Status::Ok();
  return json::ForEachItem(*list, [&](const Field& c) -> Status {
    ContainerRequests container;
    QRM_RETURN_IF_ERROR(json::ReadString(c, "name", &container.name));
    QRM_ASSIGN_OR_RETURN(container.requests, ContainerResourceRequests(c));
    out->push_back(std::move(container));
    return Status::Ok();
  });
}

// The kubelet's effective pod request: max(sum of containers, max of init containers) plus
// the RuntimeClass overhead (resourcehelper.PodRequests without sidecar init containers).
Status ReadPodRequests(const Field& spec, DrainPod* pod) {
  QRM_RETURN_IF_ERROR(ReadContainers(spec, "containers", &pod->containers));
  QRM_RETURN_IF_ERROR(ReadContainers(spec, "initContainers", &pod->init_containers));
  Resources sum, init;
  for (const ContainerRequests& c : pod->containers) Add(&sum, c.requests);
  for (const ContainerRequests& c : pod->init_containers) Max(&init, c.requests);
  Max(&sum, init);
  QRM_ASSIGN_OR_RETURN(std::optional<Field> overhead, json::Member(spec, "overhead"));
  if (overhead) QRM_RETURN_IF_ERROR(ReadResourceList(*overhead, &sum, nullptr));
  pod->requests = std::move(sum);
  return Status::Ok();
}

Status ReadTaints(const Field& spec, std::vector<Taint>* out) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> taints, json::Member(spec, "taints"));
  if (!taints) return Status::Ok();
  return json::ForEachItem(*taints, [&](const Field& f) -> Status {
    Taint t;
    QRM_RETURN_IF_ERROR(json::ReadString(f, "key", &t.key));
    QRM_RETURN_IF_ERROR(json::ReadString(f, "value", &t.value));
    QRM_RETURN_IF_ERROR(json::ReadString(f, "effect", &t.effect));
    out->push_back(std::move(t));
    return Status::Ok();
  });
}

Status ReadNodeFields(const Field& item, const DecodeOptions& options, DrainNode* node) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> spec, json::Member(item, "spec"));
  if (spec) {
    QRM_RETURN_IF_ERROR(ReadTaints(*spec, &node->taints));
    QRM_ASSIGN_OR_RETURN(std::optional<Field> unschedulable, json::Member(*spec, "unschedulable"));
    if (unschedulable) {
      QRM_ASSIGN_OR_RETURN(node->unschedulable, Bool(*unschedulable));
    }
  }
  QRM_ASSIGN_OR_RETURN(std::optional<Field> status, json::Member(item, "status"));
  if (status) {
    QRM_ASSIGN_OR_RETURN(std::optional<Field> alloc, json::Member(*status, "allocatable"));
    if (alloc) {
      QRM_RETURN_IF_ERROR(ReadResourceList(*alloc, &node->allocatable, &node->allocatable_pods));
    }
  }
  if (!options.node_group_label.empty()) {
    auto it = node->labels.find(options.node_group_label);
    if (it != node->labels.end()) node->node_group = it->second;
  }
  return Status::Ok();
}

StatusOr<DrainNode> DecodeNode(const Field& item, const DecodeOptions& options) {
  QRM_ASSIGN_OR_RETURN(ObjectMeta meta, ReadNamedMeta(item, "Node", "v1"));
  DrainNode node;
  node.name = meta.name;
  node.labels = std::move(meta.labels);
  node.annotations = std::move(meta.annotations);
  if (Status s = ReadNodeFields(item, options, &node); !s.ok()) {
    return s.WithContext("node " + node.name);
  }
  return node;
}

Status ReadOwners(const Field& metadata, std::vector<OwnerReference>* out) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> owners, json::Member(metadata, "ownerReferences"));
  if (!owners) return Status::Ok();
  return json::ForEachItem(*owners, [&](const Field& f) -> Status {
    OwnerReference o;
    QRM_RETURN_IF_ERROR(json::ReadString(f, "kind", &o.kind));
    QRM_RETURN_IF_ERROR(json::ReadString(f, "name", &o.name));
    QRM_ASSIGN_OR_RETURN(std::optional<Field> controller, json::Member(f, "controller"));
    if (controller) {
      QRM_ASSIGN_OR_RETURN(o.controller, Bool(*controller));
    }
    out->push_back(std::move(o));
    return Status::Ok();
  });
}

Status ReadVolumes(const Field& spec, std::vector<Volume>* out) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> volumes, json::Member(spec, "volumes"));
  if (!volumes) return Status::Ok();
  return json::ForEachItem(*volumes, [&](const Field& f) -> Status {
    Volume v;
    QRM_RETURN_IF_ERROR(json::ReadString(f, "name", &v.name));
    QRM_ASSIGN_OR_RETURN(std::optional<Field> empty_dir, json::Member(f, "emptyDir"));
    QRM_ASSIGN_OR_RETURN(std::optional<Field> host_path, json::Member(f, "hostPath"));
    QRM_ASSIGN_OR_RETURN(std::optional<Field> claim, json::Member(f, "persistentVolumeClaim"));
    QRM_ASSIGN_OR_RETURN(std::optional<Field> ephemeral, json::Member(f, "ephemeral"));
    QRM_RETURN_IF_ERROR(ReadAttachedDisk(f, false, &v.disk));
    if (empty_dir) {
      v.kind = VolumeKind::kEmptyDir;
      QRM_RETURN_IF_ERROR(json::ReadString(*empty_dir, "medium", &v.medium));
    } else if (host_path) {
      v.kind = VolumeKind::kHostPath;
    } else if (claim) {
      v.kind = VolumeKind::kPersistentVolumeClaim;
      QRM_RETURN_IF_ERROR(json::ReadString(*claim, "claimName", &v.claim));
    } else if (ephemeral) {
      v.kind = VolumeKind::kEphemeral;  // its claim is "<pod>-<volume>"
    } else if (!v.disk.empty()) {
      v.kind = VolumeKind::kInTreeDisk;
    }
    out->push_back(std::move(v));
    return Status::Ok();
  });
}

Status ReadTolerations(const Field& spec, std::vector<Toleration>* out) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> list, json::Member(spec, "tolerations"));
  if (!list) return Status::Ok();
  return json::ForEachItem(*list, [&](const Field& f) -> Status {
    Toleration t;
    QRM_RETURN_IF_ERROR(json::ReadString(f, "key", &t.key));
    QRM_RETURN_IF_ERROR(json::ReadString(f, "operator", &t.op));
    QRM_RETURN_IF_ERROR(json::ReadString(f, "value", &t.value));
    QRM_RETURN_IF_ERROR(json::ReadString(f, "effect", &t.effect));
    if (t.op.empty()) t.op = "Equal";
    out->push_back(std::move(t));
    return Status::Ok();
  });
}

// qrm's QoS of the pod through qos/'s resolver, the one qrm-host and the plugins call, so the
// planner never reads a pod differently from the node. A pod that does not resolve is not an
// input error: qrm-host would refuse it, and the planner keeps it off qrm's nodes.
void ResolvePodQos(const qos::RoleTable& roles, DrainPod* pod) {
  pod->pod_role = qos::PodRoleOf(pod->labels, pod->annotations);
  const StatusOr<qos::QosRequirement> q = qos::ResolveQos(pod->labels, pod->annotations, roles);
  if (!q.ok()) {
    pod->qos_error = std::string(q.status().message());
    return;
  }
  if (q->annotated) pod->qos_level = std::string(qos::QosLevelName(q->level));
  pod->numa_binding = q->numa_binding;
  pod->numa_exclusive = q->numa_exclusive;
  if (q->role.empty()) return;
  for (const auto& [name, spec] : roles.roles()) {
    if (roles.AntiAffine(q->role, name)) pod->anti_affine_roles.push_back(name);
  }
  const qos::RoleSpec* own = roles.Find(q->role);
  pod->anti_affine_to_all_roles =
      std::count(own->numa_anti_affinity.begin(), own->numa_anti_affinity.end(), "*") > 0;
}

Status ReadPodSpec(const Field& spec, DrainPod* pod) {
  QRM_RETURN_IF_ERROR(json::ReadString(spec, "nodeName", &pod->node_name));
  QRM_ASSIGN_OR_RETURN(std::optional<Field> priority, json::Member(spec, "priority"));
  if (priority) {
    QRM_ASSIGN_OR_RETURN(int64_t p, json::Int(*priority));
    pod->priority = static_cast<int32_t>(std::clamp<int64_t>(p, INT32_MIN, INT32_MAX));
  }
  QRM_ASSIGN_OR_RETURN(std::optional<Field> grace,
                       json::Member(spec, "terminationGracePeriodSeconds"));
  if (grace) {
    QRM_ASSIGN_OR_RETURN(pod->grace_period_seconds, json::Int(*grace));
  }
  QRM_RETURN_IF_ERROR(ReadPodRequests(spec, pod));
  QRM_RETURN_IF_ERROR(ReadVolumes(spec, &pod->volumes));
  QRM_RETURN_IF_ERROR(json::ReadStringMap(spec, "nodeSelector", &pod->node_selector));
  QRM_RETURN_IF_ERROR(ReadTolerations(spec, &pod->tolerations));
  QRM_RETURN_IF_ERROR(
      ReadNodeSelectorTerms(spec,
                            {"affinity", "nodeAffinity",
                             "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"},
                            &pod->required_affinity));
  return ReadPodAffinity(spec, pod);
}

Status ReadPodFields(const Field& item, const DecodeOptions& options, DrainPod* pod) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> metadata, json::Member(item, "metadata"));
  QRM_RETURN_IF_ERROR(ReadOwners(*metadata, &pod->owners));
  QRM_ASSIGN_OR_RETURN(std::optional<Field> deleted, json::Member(*metadata, "deletionTimestamp"));
  if (deleted) {
    QRM_ASSIGN_OR_RETURN(pod->deletion_time, json::Time(*deleted));
  }
  QRM_ASSIGN_OR_RETURN(std::optional<Field> spec, json::Member(item, "spec"));
  if (spec) QRM_RETURN_IF_ERROR(ReadPodSpec(*spec, pod));
  QRM_ASSIGN_OR_RETURN(std::optional<Field> status, json::Member(item, "status"));
  if (status) QRM_RETURN_IF_ERROR(json::ReadString(*status, "phase", &pod->phase));
  pod->is_mirror = pod->annotations.contains("kubernetes.io/config.mirror");
  ResolvePodQos(options.roles, pod);
  return Status::Ok();
}

StatusOr<DrainPod> DecodePod(const Field& item, const DecodeOptions& options) {
  QRM_ASSIGN_OR_RETURN(ObjectMeta meta, ReadNamedMeta(item, "Pod", "v1"));
  DrainPod pod;
  pod.namespace_ = meta.namespace_;
  pod.name = meta.name;
  pod.uid = meta.uid;
  pod.labels = std::move(meta.labels);
  pod.annotations = std::move(meta.annotations);
  pod.creation_time = meta.creation_timestamp;
  if (Status s = ReadPodFields(item, options, &pod); !s.ok()) {
    return s.WithContext("pod " + pod.Key());
  }
  return pod;
}

Status ReadPdbFields(const Field& item, DrainPdb* pdb) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> spec, json::Member(item, "spec"));
  if (spec) {
    QRM_RETURN_IF_ERROR(ReadLabelSelector(*spec, "selector", &pdb->selector));
  }
  QRM_ASSIGN_OR_RETURN(std::optional<Field> status, json::Member(item, "status"));
  if (status) {
    QRM_ASSIGN_OR_RETURN(std::optional<Field> allowed, json::Member(*status, "disruptionsAllowed"));
    if (allowed) {
      QRM_ASSIGN_OR_RETURN(pdb->disruptions_allowed, json::Int(*allowed));
    }
  }
  return Status::Ok();
}

StatusOr<DrainPdb> DecodePdb(const Field& item) {
  QRM_ASSIGN_OR_RETURN(ObjectMeta meta, ReadNamedMeta(item, "PodDisruptionBudget", "policy/v1"));
  DrainPdb pdb;
  pdb.namespace_ = meta.namespace_;
  pdb.name = meta.name;
  if (Status s = ReadPdbFields(item, &pdb); !s.ok()) {
    return s.WithContext("poddisruptionbudget " + pdb.Key());
  }
  return pdb;
}

// `kubectl get nodes,pods,pdb,noderesourcetopologies -A -o json` prints one List of all four:
// the NUMA state decoder takes the last kind, this one the others.
constexpr std::string_view kNodeResourceTopologyKind = "NodeResourceTopology";

// What else `kubectl get all` prints: nothing the planner uses, so read past.
bool IgnoredKind(std::string_view kind) {
  for (std::string_view k : {"Service", "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob",
                             "HorizontalPodAutoscaler"}) {
    if (kind == k) return true;
  }
  return false;
}

// A ReplicaSet's or ReplicationController's spec.replicas (absent: 1, the API's default), for
// the replica-count rule (--min-replica-count), keyed "namespace/Kind/name".
Status DecodeReplicaCount(const Field& item, const std::string& kind, ClusterSnapshot* snapshot) {
  QRM_ASSIGN_OR_RETURN(ObjectMeta meta,
                       ReadNamedMeta(item, kind, kind == "ReplicaSet" ? "apps/v1" : "v1"));
  const std::string key = fmt::format("{}/{}/{}", meta.namespace_, kind, meta.name);
  int64_t replicas = 1;
  QRM_ASSIGN_OR_RETURN(std::optional<Field> spec, json::Member(item, "spec"));
  if (spec) {
    QRM_ASSIGN_OR_RETURN(std::optional<Field> field, json::Member(*spec, "replicas"));
    if (field) {
      QRM_ASSIGN_OR_RETURN(replicas, json::Int(*field));
    }
  }
  const std::string what = fmt::format("{} {}/{}", kind, meta.namespace_, meta.name);
  if (replicas < 0) {
    return InvalidArgumentError(fmt::format("{}: spec.replicas: {} is negative", what, replicas));
  }
  if (!snapshot->controller_replicas.emplace(key, replicas).second) {
    return InvalidArgumentError(what + ": listed twice");
  }
  return Status::Ok();
}

// A Namespace's labels, for the namespaceSelector of pod affinity terms.
Status DecodeNamespace(const Field& item, ClusterSnapshot* snapshot) {
  QRM_ASSIGN_OR_RETURN(ObjectMeta meta, ReadNamedMeta(item, "Namespace", "v1"));
  if (!snapshot->namespaces.emplace(meta.name, std::move(meta.labels)).second) {
    return InvalidArgumentError(fmt::format("namespace {}: listed twice", meta.name));
  }
  return Status::Ok();
}

// One item of a list; `kind` is the list's item kind, or "" for a `kind: List`.
Status DecodeItem(const Field& item, std::string kind, const DecodeOptions& options,
                  ClusterSnapshot* snapshot) {
  if (kind.empty()) QRM_RETURN_IF_ERROR(json::ReadString(item, "kind", &kind));
  if (kind == "Node") {
    QRM_ASSIGN_OR_RETURN(DrainNode node, DecodeNode(item, options));
    snapshot->nodes.push_back(std::move(node));
  } else if (kind == "Pod") {
    QRM_ASSIGN_OR_RETURN(DrainPod pod, DecodePod(item, options));
    snapshot->pods.push_back(std::move(pod));
  } else if (kind == "PodDisruptionBudget") {
    QRM_ASSIGN_OR_RETURN(DrainPdb pdb, DecodePdb(item));
    snapshot->pdbs.push_back(std::move(pdb));
  } else if (kind == "ReplicaSet" || kind == "ReplicationController") {
    QRM_RETURN_IF_ERROR(DecodeReplicaCount(item, kind, snapshot));
  } else if (kind == "Namespace") {
    QRM_RETURN_IF_ERROR(DecodeNamespace(item, snapshot));
  } else if (kind == "PersistentVolumeClaim") {
    QRM_RETURN_IF_ERROR(DecodeClaim(item, snapshot));
  } else if (kind == "PersistentVolume") {
    QRM_RETURN_IF_ERROR(DecodeVolume(item, snapshot));
  } else if (kind == "StorageClass") {
    QRM_RETURN_IF_ERROR(DecodeStorageClass(item, snapshot));
  } else if (kind == "CSINode") {
    QRM_RETURN_IF_ERROR(DecodeCsiNode(item, snapshot));
  } else if (kind != kNodeResourceTopologyKind && !IgnoredKind(kind)) {
    return InvalidArgumentError(fmt::format(
        "kind: {} is not Node, Pod, PodDisruptionBudget, ReplicaSet, ReplicationController, "
        "Namespace, PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode or "
        "NodeResourceTopology",
        Quote(kind)));
  }
  return Status::Ok();
}

// The item kind of a list kind, "" for a `kind: List`, nullopt when not a list we read.
std::optional<std::string> ItemKind(std::string_view list_kind) {
  if (list_kind == "List") return "";
  for (std::string_view k :
       {"Node", "Pod", "PodDisruptionBudget", "ReplicaSet", "ReplicationController", "Namespace",
        "PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode"}) {
    if (list_kind == std::string(k) + "List") return std::string(k);
  }
  return std::nullopt;
}

void DecodeInto(const SnapshotDocument& document, const DecodeOptions& options,
                ClusterSnapshot* snapshot, ErrorList* errors) {
  StatusOr<rapidjson::Document> doc = json::Parse(document.json, document.name);
  if (!doc.ok()) return errors->Add(doc.status());
  Field root{&*doc, ""};
  std::string kind;
  if (Status s = json::ReadString(root, "kind", &kind); !s.ok()) {
    return errors->Add(s.WithContext(document.name));
  }
  if (kind == std::string(kNodeResourceTopologyKind) + "List") return;  // numa_inputs.h
  if (IgnoredKind(kind) ||
      (kind.ends_with("List") && IgnoredKind(kind.substr(0, kind.size() - 4)))) {
    return;
  }
  std::optional<std::string> item_kind = ItemKind(kind);
  // An empty list of them still says the cluster has none (the volume check runs).
  if (item_kind == "PersistentVolumeClaim") snapshot->claims_listed = true;
  if (item_kind == "PersistentVolume") snapshot->volumes_listed = true;
  if (!item_kind) {
    // A single object (`kubectl get pod x -o json`) is read as a list of one.
    Status s = DecodeItem(root, kind, options, snapshot);
    return errors->Add(s.WithContext(document.name));
  }
  StatusOr<std::optional<Field>> items = json::Member(root, "items");
  if (!items.ok()) return errors->Add(items.status().WithContext(document.name));
  if (!*items) return;
  size_t index = 0;
  Status s = json::ForEachItem(**items, [&](const Field& item) -> Status {
    Field bare{item.value, ""};  // paths inside an object start at the object
    errors->Add(DecodeItem(bare, *item_kind, options, snapshot)
                    .WithContext(fmt::format("{}: items[{}]", document.name, index++)));
    return Status::Ok();
  });
  errors->Add(s.WithContext(document.name));
}

void CheckPod(const ClusterSnapshot& snapshot, const DrainPod& pod, ErrorList* errors) {
  std::string object = "pod " + pod.Key();
  if (!pod.node_name.empty() && snapshot.FindNode(pod.node_name) == nullptr) {
    errors->Add(InvalidArgumentError(
        fmt::format("{}: spec.nodeName: {}: no such node", object, Quote(pod.node_name))));
  }
  for (size_t t = 0; t < pod.required_affinity.size(); ++t) {
    CheckRequirements(pod.required_affinity[t].match_expressions, true,
                      fmt::format("spec.affinity.nodeAffinity."
                                  "requiredDuringSchedulingIgnoredDuringExecution."
                                  "nodeSelectorTerms[{}].matchExpressions",
                                  t),
                      errors, object);
  }
  CheckPodAffinity(snapshot, pod, errors);
}

template <typename T>
void CheckUnique(const std::vector<T>& objects, std::string_view what, ErrorList* errors) {
  std::set<std::string> seen;
  for (const T& o : objects) {
    std::string key;
    if constexpr (std::is_same_v<T, DrainNode>) {
      key = o.name;
    } else {
      key = o.Key();
    }
    if (!seen.insert(key).second) {
      errors->Add(InvalidArgumentError(fmt::format("{} {}: listed twice", what, key)));
    }
  }
}

void ValidateInto(const ClusterSnapshot& snapshot, ErrorList* errors) {
  CheckUnique(snapshot.nodes, "node", errors);
  CheckUnique(snapshot.pods, "pod", errors);
  CheckUnique(snapshot.pdbs, "poddisruptionbudget", errors);
  for (const DrainPod& pod : snapshot.pods) CheckPod(snapshot, pod, errors);
  for (const DrainPdb& pdb : snapshot.pdbs) {
    if (!pdb.selector) continue;
    CheckRequirements(pdb.selector->match_expressions, false, "spec.selector.matchExpressions",
                      errors, "poddisruptionbudget " + pdb.Key());
  }
  CheckVolumeTerms(snapshot, errors);
}

void DropPodsOfMissingNodes(ClusterSnapshot& snapshot) {
  const size_t before = snapshot.pods.size();
  std::erase_if(snapshot.pods, [&](const DrainPod& pod) {
    if (pod.node_name.empty() || snapshot.node_index.contains(pod.node_name)) return false;
    Logger("drain")->warn("pod {}: bound to node {}, which is gone; left out of the snapshot",
                          pod.Key(), pod.node_name);
    return true;
  });
  if (snapshot.pods.size() != before) snapshot.Reindex();
}

}  // namespace

Status DecodeDocument(const SnapshotDocument& document, const DecodeOptions& options,
                      ClusterSnapshot* snapshot) {
  ErrorList errors;
  DecodeInto(document, options, snapshot, &errors);
  return errors.Result();
}

StatusOr<ClusterSnapshot> DecodeSnapshot(const std::vector<SnapshotDocument>& documents,
                                         const DecodeOptions& options) {
  ClusterSnapshot snapshot;
  ErrorList errors;
  for (const SnapshotDocument& d : documents) DecodeInto(d, options, &snapshot, &errors);
  snapshot.Reindex();
  if (options.drop_pods_of_missing_nodes) DropPodsOfMissingNodes(snapshot);
  if (errors.empty()) ValidateInto(snapshot, &errors);
  QRM_RETURN_IF_ERROR(errors.Result());
  return snapshot;
}

Status Validate(const ClusterSnapshot& snapshot) {
  ErrorList errors;
  ValidateInto(snapshot, &errors);
  return errors.Result();
}

}  // namespace qrm::cluster::drain
