#include "cluster/webhook/pod_view.h"

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "cluster/webhook/json_fields.h"
#include "common/json_string.h"
#include "common/quote.h"

namespace qrm::webhook {
namespace {

using Value = rapidjson::Value;

StatusOr<std::map<std::string, std::string>> ReadStringMap(const Value& metadata,
                                                           std::string_view name) {
  std::map<std::string, std::string> out;
  QRM_ASSIGN_OR_RETURN(const Value* map, ObjectField(metadata, name, "object.metadata"));
  if (map == nullptr) return out;
  for (const auto& member : map->GetObject()) {
    const std::string key = JsonString(member.name);
    if (!member.value.IsString()) {
      return WrongType(fmt::format("object.metadata.{}[{}]", name, Quote(key)), "a string",
                       member.value);
    }
    out[key] = JsonString(member.value);
  }
  return out;
}

// A resource.Quantity in JSON: a string, or a bare number (Go's UnmarshalJSON takes both).
StatusOr<Quantity> ReadQuantity(const Value& v, const std::string& path) {
  std::string text;
  if (v.IsString()) {
    text = JsonString(v);
  } else if (v.IsNumber()) {
    text = JsonText(v);
  } else {
    return WrongType(path, "a quantity", v);
  }
  auto q = Quantity::Parse(text);
  if (!q.ok()) return q.status().WithContext(path);
  return q;
}

StatusOr<std::map<std::string, Quantity>> ReadResourceList(const Value& resources,
                                                           std::string_view name,
                                                           const std::string& parent) {
  std::map<std::string, Quantity> out;
  QRM_ASSIGN_OR_RETURN(const Value* list, ObjectField(resources, name, parent));
  if (list == nullptr) return out;
  for (const auto& member : list->GetObject()) {
    const std::string resource = JsonString(member.name);
    const std::string path = fmt::format("{}.{}[{}]", parent, name, Quote(resource));
    QRM_ASSIGN_OR_RETURN(out[resource], ReadQuantity(member.value, path));
  }
  return out;
}

StatusOr<ContainerView> ReadContainer(const Value& v, const std::string& path, bool init) {
  if (!v.IsObject()) return WrongType(path, "a container object", v);
  ContainerView c;
  c.init = init;
  QRM_ASSIGN_OR_RETURN(c.name, StringField(v, "name", path));
  if (c.name.empty()) return InvalidArgumentError(path + ".name: missing");
  QRM_ASSIGN_OR_RETURN(const Value* resources, ObjectField(v, "resources", path));
  if (resources == nullptr) return c;
  const std::string resources_path = path + ".resources";
  QRM_ASSIGN_OR_RETURN(c.limits, ReadResourceList(*resources, "limits", resources_path));
  QRM_ASSIGN_OR_RETURN(c.requests, ReadResourceList(*resources, "requests", resources_path));
  return c;
}

Status ReadContainers(const Value& spec, std::string_view field, bool init, PodView& pod) {
  QRM_ASSIGN_OR_RETURN(const Value* list, ArrayField(spec, field, "object.spec"));
  if (list == nullptr) {
    if (init) return Status::Ok();
    return InvalidArgumentError("object.spec.containers: missing");
  }
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    const std::string path = fmt::format("object.spec.{}[{}]", field, i);
    QRM_ASSIGN_OR_RETURN(auto container, ReadContainer((*list)[i], path, init));
    pod.containers.push_back(std::move(container));
  }
  return Status::Ok();
}

Status ReadMetadata(const Value& object, PodView& pod) {
  QRM_ASSIGN_OR_RETURN(const Value* metadata, ObjectField(object, "metadata", "object"));
  if (metadata == nullptr) return InvalidArgumentError("object.metadata: missing");
  QRM_ASSIGN_OR_RETURN(pod.name, StringField(*metadata, "name", "object.metadata"));
  if (pod.name.empty()) {
    QRM_ASSIGN_OR_RETURN(pod.name, StringField(*metadata, "generateName", "object.metadata"));
  }
  pod.has_annotations = Member(*metadata, "annotations") != nullptr;
  QRM_ASSIGN_OR_RETURN(pod.annotations, ReadStringMap(*metadata, "annotations"));
  QRM_ASSIGN_OR_RETURN(pod.labels, ReadStringMap(*metadata, "labels"));
  return Status::Ok();
}

}  // namespace

StatusOr<PodView> ReadPod(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) return InvalidArgumentError("object: not JSON");
  if (!doc.IsObject()) return WrongType("object", "a Pod object", doc);
  QRM_ASSIGN_OR_RETURN(std::string kind, StringField(doc, "kind", "object"));
  if (!kind.empty() && kind != "Pod") {
    return InvalidArgumentError(fmt::format("object.kind: {} is not Pod", Quote(kind)));
  }
  PodView pod;
  QRM_RETURN_IF_ERROR(ReadMetadata(doc, pod));
  QRM_ASSIGN_OR_RETURN(const Value* spec, ObjectField(doc, "spec", "object"));
  if (spec == nullptr) return InvalidArgumentError("object.spec: missing");
  QRM_RETURN_IF_ERROR(ReadContainers(*spec, "initContainers", true, pod));
  QRM_RETURN_IF_ERROR(ReadContainers(*spec, "containers", false, pod));
  return pod;
}

}  // namespace qrm::webhook
