#include "cluster/objects/node_resource_topology.h"

#include <charconv>

#include <fmt/format.h>

#include "cluster/objects/json_io.h"
#include "common/quote.h"

namespace qrm::cluster {
namespace {

using json::Field;
using json::Writer;

void WriteAttributeArray(Writer& w, const std::vector<NrtAttribute>& list) {
  w.StartArray();
  for (const NrtAttribute& a : list) {
    w.StartObject();
    json::WriteString(w, "name", a.name);
    json::WriteString(w, "value", a.value);
    w.EndObject();
  }
  w.EndArray();
}

void WriteAttributes(Writer& w, const std::vector<NrtAttribute>& list) {
  if (list.empty()) return;
  w.Key("attributes");
  WriteAttributeArray(w, list);
}

void WriteZone(Writer& w, const NrtZone& z) {
  w.StartObject();
  json::WriteString(w, "name", z.name);
  json::WriteString(w, "type", z.type);
  json::WriteStringIfSet(w, "parent", z.parent);
  if (!z.costs.empty()) {
    w.Key("costs");
    w.StartArray();
    for (const NrtCost& c : z.costs) {
      w.StartObject();
      json::WriteString(w, "name", c.name);
      w.Key("value");
      w.Int64(c.value);
      w.EndObject();
    }
    w.EndArray();
  }
  WriteAttributes(w, z.attributes);
  if (!z.resources.empty()) {
    w.Key("resources");
    w.StartArray();
    for (const NrtResourceInfo& r : z.resources) {
      w.StartObject();
      json::WriteString(w, "name", r.name);
      json::WriteString(w, "capacity", r.capacity.ToString());
      json::WriteString(w, "allocatable", r.allocatable.ToString());
      json::WriteString(w, "available", r.available.ToString());
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

Status ReadAttributes(const Field& object, std::vector<NrtAttribute>* out) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> list, json::Member(object, "attributes"));
  if (!list) return Status::Ok();
  return json::ForEachItem(*list, [&](const Field& item) -> Status {
    NrtAttribute a;
    QRM_RETURN_IF_ERROR(json::ReadString(item, "name", &a.name));
    QRM_RETURN_IF_ERROR(json::ReadString(item, "value", &a.value));
    out->push_back(std::move(a));
    return Status::Ok();
  });
}

StatusOr<Quantity> ReadQuantity(const Field& item, const char* key) {
  QRM_ASSIGN_OR_RETURN(std::optional<Field> f, json::Member(item, key));
  if (!f) return Quantity();  // Go leaves a zero quantity
  return json::NonNegativeQuantity(*f);
}

StatusOr<NrtResourceInfo> ReadResource(const Field& item) {
  NrtResourceInfo r;
  QRM_RETURN_IF_ERROR(json::ReadString(item, "name", &r.name));
  QRM_ASSIGN_OR_RETURN(r.capacity, ReadQuantity(item, "capacity"));
  QRM_ASSIGN_OR_RETURN(r.allocatable, ReadQuantity(item, "allocatable"));
  QRM_ASSIGN_OR_RETURN(r.available, ReadQuantity(item, "available"));
  if (r.allocatable.AsDouble() > r.capacity.AsDouble() ||
      r.available.AsDouble() > r.allocatable.AsDouble()) {
    return InvalidArgumentError(fmt::format(
        "{}: resource {}: capacity {}, allocatable {}, available {}: each must be at most the one "
        "before",
        item.path, Quote(r.name), r.capacity.ToString(), r.allocatable.ToString(),
        r.available.ToString()));
  }
  return r;
}

StatusOr<NrtZone> ReadZone(const Field& item) {
  NrtZone z;
  QRM_RETURN_IF_ERROR(json::ReadString(item, "name", &z.name));
  QRM_RETURN_IF_ERROR(json::ReadString(item, "type", &z.type));
  QRM_RETURN_IF_ERROR(json::ReadString(item, "parent", &z.parent));
  QRM_ASSIGN_OR_RETURN(std::optional<Field> costs, json::Member(item, "costs"));
  if (costs) {
    if (Status each = json::ForEachItem(
            *costs,
            [&](const Field& c) -> Status {
              NrtCost cost;
              QRM_RETURN_IF_ERROR(json::ReadString(c, "name", &cost.name));
              QRM_ASSIGN_OR_RETURN(std::optional<Field> value, json::Member(c, "value"));
              if (value) {
                QRM_ASSIGN_OR_RETURN(cost.value, json::Int(*value));
              }
              z.costs.push_back(std::move(cost));
              return Status::Ok();
            });
        !each.ok())
      return each;
  }
  QRM_RETURN_IF_ERROR(ReadAttributes(item, &z.attributes));
  QRM_ASSIGN_OR_RETURN(std::optional<Field> resources, json::Member(item, "resources"));
  if (resources) {
    if (Status each = json::ForEachItem(*resources,
                                        [&](const Field& r) -> Status {
                                          QRM_ASSIGN_OR_RETURN(NrtResourceInfo info,
                                                               ReadResource(r));
                                          z.resources.push_back(std::move(info));
                                          return Status::Ok();
                                        });
        !each.ok())
      return each;
  }
  return z;
}

StatusOr<NodeResourceTopology> ReadNrt(const Field& root) {
  NodeResourceTopology nrt;
  QRM_ASSIGN_OR_RETURN(nrt.metadata, json::ReadTypeAndObjectMeta(root, kNrtKind, kNrtApiVersion));
  QRM_ASSIGN_OR_RETURN(std::optional<Field> policies, json::Member(root, "topologyPolicies"));
  if (policies) {
    if (Status each = json::ForEachItem(*policies,
                                        [&](const Field& p) -> Status {
                                          QRM_ASSIGN_OR_RETURN(std::string v, json::String(p));
                                          nrt.topology_policies.push_back(std::move(v));
                                          return Status::Ok();
                                        });
        !each.ok())
      return each;
  }
  QRM_ASSIGN_OR_RETURN(std::optional<Field> zones, json::Member(root, "zones"));
  if (zones) {
    if (Status each = json::ForEachItem(*zones,
                                        [&](const Field& z) -> Status {
                                          QRM_ASSIGN_OR_RETURN(NrtZone zone, ReadZone(z));
                                          nrt.zones.push_back(std::move(zone));
                                          return Status::Ok();
                                        });
        !each.ok())
      return each;
  }
  QRM_RETURN_IF_ERROR(ReadAttributes(root, &nrt.attributes));
  return nrt;
}

}  // namespace

std::string NumaZoneName(int numa_id) {
  return fmt::format("node-{}", numa_id);
}

StatusOr<int> NumaZoneId(std::string_view name) {
  int id = -1;
  const std::string_view digits = name.starts_with("node-") ? name.substr(5) : std::string_view();
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || id < 0) {
    return InvalidArgumentError(
        fmt::format("zone {}: not a NUMA zone name (node-<id>)", Quote(name)));
  }
  return id;
}

std::string EncodeNodeResourceTopology(const NodeResourceTopology& nrt) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  json::WriteTypeAndObjectMeta(w, kNrtKind, kNrtApiVersion, nrt.metadata);
  if (!nrt.topology_policies.empty()) {
    w.Key("topologyPolicies");
    w.StartArray();
    for (const std::string& p : nrt.topology_policies) w.String(p.c_str());
    w.EndArray();
  }
  w.Key("zones");
  if (nrt.zones.empty()) {
    w.Null();  // a nil ZoneList (no omitempty upstream)
  } else {
    w.StartArray();
    for (const NrtZone& z : nrt.zones) WriteZone(w, z);
    w.EndArray();
  }
  WriteAttributes(w, nrt.attributes);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string EncodeNrtZones(const std::vector<NrtZone>& zones) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartArray();
  for (const NrtZone& z : zones) WriteZone(w, z);
  w.EndArray();
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string EncodeNrtAttributes(const std::vector<NrtAttribute>& attributes) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  WriteAttributeArray(w, attributes);
  return std::string(buffer.GetString(), buffer.GetSize());
}

StatusOr<NodeResourceTopology> DecodeNodeResourceTopology(std::string_view text) {
  QRM_ASSIGN_OR_RETURN(rapidjson::Document doc, json::Parse(text, "NodeResourceTopology"));
  auto nrt = ReadNrt(Field{&doc, ""});
  if (!nrt.ok()) {
    return Status(nrt.status().code(),
                  fmt::format("NodeResourceTopology: {}", nrt.status().message()));
  }
  return nrt;
}

}  // namespace qrm::cluster
