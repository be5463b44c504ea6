#include "cluster/drain/storage_json.h"

#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "cluster/drain/selector_json.h"

namespace qrm::cluster::drain {
namespace {

using json::Field;

constexpr char kApiVersion[] = "storage.k8s.io/v1";

// One matchLabelExpressions[] entry: key In values. The API server requires a key and at
// least one value.
StatusOr<SelectorRequirement> ReadTopologyRequirement(const Field& f) {
  SelectorRequirement r{"", SelectorOp::kIn, "In", {}};
  QRM_RETURN_IF_ERROR(json::ReadString(f, "key", &r.key));
  if (r.key.empty()) return InvalidArgumentError(fmt::format("{}.key: missing", f.path));
  QRM_ASSIGN_OR_RETURN(std::optional<Field> values, json::Member(f, "values"));
  if (values) {
    QRM_RETURN_IF_ERROR(json::ForEachItem(*values, [&](const Field& v) -> Status {
      StatusOr<std::string> value = json::String(v);
      if (!value.ok()) return value.status();
      r.values.push_back(*std::move(value));
      return Status::Ok();
    }));
  }
  if (r.values.empty()) return InvalidArgumentError(fmt::format("{}.values: empty", f.path));
  return r;
}

// One allowedTopologies[] item: its matchLabelExpressions (ANDed) as a node selector term.
StatusOr<NodeSelectorTerm> ReadTopologyTerm(const Field& term) {
  NodeSelectorTerm out;
  QRM_ASSIGN_OR_RETURN(std::optional<Field> list, json::Member(term, "matchLabelExpressions"));
  if (!list) return out;
  QRM_RETURN_IF_ERROR(json::ForEachItem(*list, [&](const Field& f) -> Status {
    StatusOr<SelectorRequirement> r = ReadTopologyRequirement(f);
    if (!r.ok()) return r.status();
    out.match_expressions.push_back(*std::move(r));
    return Status::Ok();
  }));
  return out;
}

Status ReadStorageClassFields(const Field& item, DrainStorageClass* out) {
  QRM_RETURN_IF_ERROR(json::ReadString(item, "provisioner", &out->provisioner));
  if (out->provisioner.empty()) return InvalidArgumentError("provisioner: missing");
  QRM_RETURN_IF_ERROR(json::ReadString(item, "volumeBindingMode", &out->binding_mode));
  if (out->binding_mode != "Immediate" && out->binding_mode != "WaitForFirstConsumer") {
    return InvalidArgumentError(fmt::format(
        "volumeBindingMode: \"{}\" is not Immediate or WaitForFirstConsumer", out->binding_mode));
  }
  QRM_ASSIGN_OR_RETURN(std::optional<Field> topologies, json::Member(item, "allowedTopologies"));
  if (!topologies) return Status::Ok();
  return json::ForEachItem(*topologies, [&](const Field& f) -> Status {
    QRM_ASSIGN_OR_RETURN(NodeSelectorTerm term, ReadTopologyTerm(f));
    out->allowed_topologies.push_back(std::move(term));
    return Status::Ok();
  });
}

// spec.drivers[i].allocatable.count, nullopt when allocatable or count is absent.
StatusOr<std::optional<int64_t>> ReadDriverCount(const Field& driver) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> allocatable, json::Member(driver, "allocatable"));
  if (!allocatable) return std::optional<int64_t>();
  QRM_ASSIGN_OR_RETURN(std::optional<Field> count, json::Member(*allocatable, "count"));
  if (!count) return std::optional<int64_t>();
  QRM_ASSIGN_OR_RETURN(int64_t value, json::Int(*count));
  if (value < 0) {
    return InvalidArgumentError(fmt::format("{}: {} is negative", count->path, value));
  }
  return std::optional<int64_t>(value);
}

Status ReadCsiDrivers(const Field& item, DrainCsiNode* out) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> spec, json::Member(item, "spec"));
  if (!spec) return Status::Ok();
  QRM_ASSIGN_OR_RETURN(std::optional<Field> drivers, json::Member(*spec, "drivers"));
  if (!drivers) return Status::Ok();
  return json::ForEachItem(*drivers, [&](const Field& f) -> Status {
    std::string name;
    QRM_RETURN_IF_ERROR(json::ReadString(f, "name", &name));
    if (name.empty()) return InvalidArgumentError(fmt::format("{}.name: missing", f.path));
    QRM_ASSIGN_OR_RETURN(std::optional<int64_t> count, ReadDriverCount(f));
    if (!out->drivers.emplace(name, count).second) {
      return InvalidArgumentError(fmt::format("{}: driver \"{}\" listed twice", f.path, name));
    }
    return Status::Ok();
  });
}

}  // namespace

Status DecodeStorageClass(const Field& item, ClusterSnapshot* snapshot) {
  QRM_ASSIGN_OR_RETURN(ObjectMeta meta, ReadNamedMeta(item, "StorageClass", kApiVersion));
  DrainStorageClass storage_class{meta.name, "", "Immediate", {}};
  const std::string what = "storageclass " + storage_class.name;
  if (Status s = ReadStorageClassFields(item, &storage_class); !s.ok()) return s.WithContext(what);
  if (!snapshot->storage_classes.emplace(storage_class.name, std::move(storage_class)).second) {
    return InvalidArgumentError(what + ": listed twice");
  }
  return Status::Ok();
}

Status DecodeCsiNode(const Field& item, ClusterSnapshot* snapshot) {
  QRM_ASSIGN_OR_RETURN(ObjectMeta meta, ReadNamedMeta(item, "CSINode", kApiVersion));
  DrainCsiNode csi_node{meta.name, {}};
  const std::string what = "csinode " + csi_node.name;
  if (Status s = ReadCsiDrivers(item, &csi_node); !s.ok()) return s.WithContext(what);
  if (!snapshot->csi_nodes.emplace(csi_node.name, std::move(csi_node)).second) {
    return InvalidArgumentError(what + ": listed twice");
  }
  return Status::Ok();
}

}  // namespace qrm::cluster::drain
