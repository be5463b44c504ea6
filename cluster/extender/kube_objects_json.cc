#include "cluster/extender/kube_objects_json.h"

#include <utility>

#include <fmt/format.h>

#include "common/quote.h"

namespace qrm::extender {
namespace {

// Reads the digits of s[pos, pos + n); false when one is not a digit.
bool Digits(std::string_view s, size_t pos, size_t n, int& out) {
  if (pos + n > s.size()) return false;
  out = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

int DaysIn(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// metav1.Time: null is the zero time (""), a string must be RFC 3339.
Status ReadTime(const GoDecoder& d, const JsonValue& v, const JsonPath& path, std::string& out) {
  if (v.IsNull()) {
    out.clear();
    return Status::Ok();
  }
  if (!d.IsString(v)) return d.TypeError(path, v, "an RFC 3339 time string");
  const std::string_view text(v.GetString(), v.GetStringLength());
  if (!IsRfc3339Time(text)) {
    return d.Error(path, fmt::format("{} is not an RFC 3339 time", Quote(text)));
  }
  out = text;
  return Status::Ok();
}

Status ReadResources(const GoDecoder& d, const JsonValue& v, const JsonPath& path,
                     ResourceRequirements& out) {
  return d.ReadStruct(v, path, {"requests", "limits"},
                      [&](size_t field, const JsonValue& fv, const JsonPath& fp) {
                        return d.ReadQuantityMap(fv, fp, field == 0 ? out.requests : out.limits);
                      });
}

// A Go *string: null resets it.
Status ReadOptionalString(const GoDecoder& d, const JsonValue& v, const JsonPath& path,
                          std::optional<std::string>& out) {
  if (v.IsNull()) {
    out.reset();
    return Status::Ok();
  }
  std::string text;
  QRM_RETURN_IF_ERROR(d.ReadString(v, path, text));
  out = std::move(text);
  return Status::Ok();
}

// A Go *bool: null resets it; anything but true or false is an error.
Status ReadOptionalBool(const GoDecoder& d, const JsonValue& v, const JsonPath& path,
                        std::optional<bool>& out) {
  if (v.IsNull()) {
    out.reset();
    return Status::Ok();
  }
  if (!v.IsBool()) return d.TypeError(path, v, "a boolean");
  out = v.GetBool();
  return Status::Ok();
}

// A Go *ResourceRequirements: null resets it; an object merges into what is there.
Status ReadOptionalResources(const GoDecoder& d, const JsonValue& v, const JsonPath& path,
                             std::optional<ResourceRequirements>& out) {
  if (v.IsNull()) {
    out.reset();
    return Status::Ok();
  }
  if (!v.IsObject()) return d.TypeError(path, v, "an object");
  if (!out) out.emplace();
  return ReadResources(d, v, path, *out);
}

Status ReadContainer(const GoDecoder& d, const JsonValue& v, const JsonPath& path, Container& out) {
  return d.ReadStruct(v, path, {"name", "resources", "restartPolicy"},
                      [&](size_t field, const JsonValue& fv, const JsonPath& fp) {
                        switch (field) {
                          case 0: return d.ReadString(fv, fp, out.name);
                          case 1: return ReadResources(d, fv, fp, out.resources);
                          default: return ReadOptionalString(d, fv, fp, out.restart_policy);
                        }
                      });
}

Status ReadContainers(const GoDecoder& d, const JsonValue& v, const JsonPath& path,
                      std::vector<Container>& out) {
  return d.ReadList(v, path, out, [&](Container& c, const JsonValue& e, const JsonPath& p) {
    return ReadContainer(d, e, p, c);
  });
}

Status ReadPodSpec(const GoDecoder& d, const JsonValue& v, const JsonPath& path, PodSpec& out) {
  return d.ReadStruct(v, path,
                      {"nodeName", "priority", "priorityClassName", "containers", "initContainers",
                       "overhead", "resources"},
                      [&](size_t field, const JsonValue& fv, const JsonPath& fp) {
                        switch (field) {
                          case 0: return d.ReadString(fv, fp, out.node_name);
                          case 1: return d.ReadOptionalInt32(fv, fp, out.priority);
                          case 2: return d.ReadString(fv, fp, out.priority_class_name);
                          case 3: return ReadContainers(d, fv, fp, out.containers);
                          case 4: return ReadContainers(d, fv, fp, out.init_containers);
                          case 5: return d.ReadQuantityMap(fv, fp, out.overhead);
                          default: return ReadOptionalResources(d, fv, fp, out.resources);
                        }
                      });
}

Status ReadPodStatus(const GoDecoder& d, const JsonValue& v, const JsonPath& path, PodStatus& out) {
  return d.ReadStruct(
      v, path, {"phase", "conditions", "qosClass"},
      [&](size_t field, const JsonValue& fv, const JsonPath& fp) {
        if (field == 0) return d.ReadString(fv, fp, out.phase);
        if (field == 2) return d.ReadString(fv, fp, out.qos_class);
        return d.ReadList(
            fv, fp, out.conditions, [&](PodCondition& c, const JsonValue& e, const JsonPath& p) {
              return d.ReadStruct(e, p, {"type", "status", "lastTransitionTime"},
                                  [&](size_t f, const JsonValue& cv, const JsonPath& cp) {
                                    if (f == 0) return d.ReadString(cv, cp, c.type);
                                    if (f == 1) return d.ReadString(cv, cp, c.status);
                                    return ReadTime(d, cv, cp, c.last_transition_time);
                                  });
            });
      });
}

Status ReadOwnerReferences(const GoDecoder& d, const JsonValue& v, const JsonPath& path,
                           std::vector<OwnerReference>& out) {
  return d.ReadList(v, path, out, [&](OwnerReference& r, const JsonValue& e, const JsonPath& p) {
    return d.ReadStruct(e, p, {"kind", "name", "controller"},
                        [&](size_t f, const JsonValue& rv, const JsonPath& rp) {
                          if (f == 0) return d.ReadString(rv, rp, r.kind);
                          if (f == 1) return d.ReadString(rv, rp, r.name);
                          return ReadOptionalBool(d, rv, rp, r.controller);
                        });
  });
}

}  // namespace

Status ReadNode(const GoDecoder& d, const JsonValue& v, const JsonPath& path, Node& out) {
  QRM_RETURN_IF_ERROR(d.ReadStruct(
      v, path, {"metadata", "status"}, [&](size_t field, const JsonValue& fv, const JsonPath& fp) {
        if (field == 0) return ReadObjectMeta(d, fv, fp, out.metadata);
        return d.ReadStruct(fv, fp, {"capacity", "allocatable"},
                            [&](size_t f, const JsonValue& sv, const JsonPath& sp) {
                              return d.ReadQuantityMap(
                                  sv, sp, f == 0 ? out.status.capacity : out.status.allocatable);
                            });
      }));
  if (v.IsObject()) out.json = d.document().Text(v);
  return Status::Ok();
}

namespace {

void WriteStringMap(std::string_view key, const std::map<std::string, std::string>& map,
                    GoJsonWriter& w) {
  if (map.empty()) return;  // omitempty
  w.Key(key);
  w.BeginObject();
  for (const auto& [k, v] : map) {
    w.Key(k);
    w.String(v);
  }
  w.EndObject();
}

void WriteResourceList(std::string_view key, const ResourceList& list, GoJsonWriter& w) {
  if (list.empty()) return;  // omitempty
  w.Key(key);
  w.BeginObject();
  for (const auto& [name, quantity] : list) {
    w.Key(name);
    w.String(quantity.ToString());
  }
  w.EndObject();
}

// A node built here: the fields we know, in core/v1's order, the empty ones left out.
void WriteBuiltNode(const Node& node, GoJsonWriter& w) {
  const ObjectMeta& m = node.metadata;
  w.BeginObject();
  w.Key("metadata");
  w.BeginObject();
  const std::pair<std::string_view, const std::string*> strings[] = {
      {"name", &m.name},
      {"namespace", &m.namespace_name},
      {"uid", &m.uid},
      {"creationTimestamp", &m.creation_timestamp}};
  for (const auto& [key, value] : strings) {
    if (value->empty()) continue;
    w.Key(key);
    w.String(*value);
  }
  WriteStringMap("labels", m.labels, w);
  WriteStringMap("annotations", m.annotations, w);
  w.EndObject();
  w.Key("status");
  w.BeginObject();
  WriteResourceList("capacity", node.status.capacity, w);
  WriteResourceList("allocatable", node.status.allocatable, w);
  w.EndObject();
  w.EndObject();
}

}  // namespace

bool IsRfc3339Time(std::string_view s) {
  // 2006-01-02T15:04:05[.999999999]Z07:00. Go reads the hour with one or two digits, accepts a
  // comma before the fraction and offsets up to 24:60 ("some people do write" them).
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!Digits(s, 0, 4, year) || s.substr(4, 1) != "-" || !Digits(s, 5, 2, month) ||
      s.substr(7, 1) != "-" || !Digits(s, 8, 2, day) || s.substr(10, 1) != "T") {
    return false;
  }
  size_t pos = 11;
  const size_t hour_digits = s.size() > 12 && s[12] >= '0' && s[12] <= '9' ? 2 : 1;
  if (!Digits(s, pos, hour_digits, hour)) return false;
  pos += hour_digits;
  if (s.substr(pos, 1) != ":" || !Digits(s, pos + 1, 2, minute) || s.substr(pos + 3, 1) != ":" ||
      !Digits(s, pos + 4, 2, second)) {
    return false;
  }
  pos += 6;
  if (pos + 1 < s.size() && (s[pos] == '.' || s[pos] == ',') && s[pos + 1] >= '0' &&
      s[pos + 1] <= '9') {
    for (++pos; pos < s.size() && s[pos] >= '0' && s[pos] <= '9';) ++pos;
  }
  const std::string_view zone = s.substr(pos);
  int zh = 0, zm = 0;
  const bool zone_ok = zone == "Z" || (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') &&
                                       Digits(zone, 1, 2, zh) && zone[3] == ':' &&
                                       Digits(zone, 4, 2, zm) && zh <= 24 && zm <= 60);
  return zone_ok && month >= 1 && month <= 12 && day >= 1 && day <= DaysIn(year, month) &&
         hour < 24 && minute < 60 && second < 60;
}

Status ReadObjectMeta(const GoDecoder& d, const JsonValue& v, const JsonPath& path,
                      ObjectMeta& out) {
  return d.ReadStruct(
      v, path,
      {"name", "namespace", "uid", "labels", "annotations", "creationTimestamp", "ownerReferences"},
      [&](size_t field, const JsonValue& fv, const JsonPath& fp) {
        switch (field) {
          case 0: return d.ReadString(fv, fp, out.name);
          case 1: return d.ReadString(fv, fp, out.namespace_name);
          case 2: return d.ReadString(fv, fp, out.uid);
          case 3: return d.ReadStringMap(fv, fp, out.labels);
          case 4: return d.ReadStringMap(fv, fp, out.annotations);
          case 5: return ReadTime(d, fv, fp, out.creation_timestamp);
          default: return ReadOwnerReferences(d, fv, fp, out.owner_references);
        }
      });
}

Status ReadPod(const GoDecoder& d, const JsonValue& v, const JsonPath& path, Pod& out) {
  return d.ReadStruct(v, path, {"metadata", "spec", "status"},
                      [&](size_t field, const JsonValue& fv, const JsonPath& fp) {
                        switch (field) {
                          case 0: return ReadObjectMeta(d, fv, fp, out.metadata);
                          case 1: return ReadPodSpec(d, fv, fp, out.spec);
                          default: return ReadPodStatus(d, fv, fp, out.status);
                        }
                      });
}

Status ReadNodeList(const GoDecoder& d, const JsonValue& v, const JsonPath& path, NodeList& out) {
  return d.ReadStruct(v, path, {"items"}, [&](size_t, const JsonValue& fv, const JsonPath& fp) {
    return d.ReadList(fv, fp, out.items, [&](Node& n, const JsonValue& e, const JsonPath& p) {
      // Not merged into a node read before (as Go would for a repeated "items"): a node's text
      // must say what its fields say.
      n = Node();
      return ReadNode(d, e, p, n);
    });
  });
}

void WriteNodeList(const NodeList& list, GoJsonWriter& w) {
  w.BeginObject();
  w.Key("metadata");
  w.BeginObject();
  w.EndObject();
  w.Key("items");
  w.BeginArray();
  for (const Node& node : list.items) {
    if (node.json.empty()) {
      WriteBuiltNode(node, w);
    } else {
      w.Raw(node.json);
    }
  }
  w.EndArray();
  w.EndObject();
}

}  // namespace qrm::extender
