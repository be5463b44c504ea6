#include "cluster/extender/extender_codec.h"

#include <initializer_list>
#include <utility>

#include "cluster/extender/go_json_reader.h"
#include "cluster/extender/go_json_writer.h"
#include "cluster/extender/kube_objects_json.h"

namespace qrm::extender {
namespace {

// Parses `json` and reads its top value with read(decoder, value, path) into a T.
template <typename T, typename Read>
StatusOr<T> Decode(std::string_view json, std::string_view type, Read&& read) {
  JsonDocument doc;
  if (Status s = doc.Parse(json); !s.ok()) return s.WithContext(type);
  const GoDecoder d(doc, type);
  T out{};
  QRM_RETURN_IF_ERROR(read(d, doc.root(), JsonPath(), out));
  return out;
}

// A Go *T: null is nil; an object is read into what is there (a new T when nil).
template <typename T, typename Read>
Status ReadPointer(const GoDecoder& d, const JsonValue& v, const JsonPath& path,
                   std::optional<T>& out, Read&& read) {
  if (v.IsNull()) {
    out.reset();
    return Status::Ok();
  }
  if (!v.IsObject()) return d.TypeError(path, v, "an object");
  if (!out) out.emplace();
  return read(d, v, path, *out);
}

// A Go map whose nil is kept apart from empty.
template <typename T, typename Read>
Status ReadOptionalMap(const GoDecoder& d, const JsonValue& v, const JsonPath& path,
                       std::optional<std::map<std::string, T>>& out, Read&& read) {
  if (v.IsNull()) {
    out.reset();
    return Status::Ok();
  }
  if (!v.IsObject()) return d.TypeError(path, v, "an object");
  if (!out) out.emplace();
  return d.ReadMap(v, path, *out, read);
}

Status ReadFailedNodes(const GoDecoder& d, const JsonValue& v, const JsonPath& path,
                       std::optional<FailedNodesMap>& out) {
  return ReadOptionalMap(
      d, v, path, out,
      [&](std::string& s, const JsonValue& e, const JsonPath& p) { return d.ReadString(e, p, s); });
}

// An element of a Go []*T: null sets it to nil, which we have as the zero T.
template <typename T, typename Read>
auto PointerElements(const GoDecoder& d, Read read) {
  return [&d, read](T& element, const JsonValue& v, const JsonPath& path) -> Status {
    if (v.IsNull()) {
      element = T{};
      return Status::Ok();
    }
    return read(d, v, path, element);
  };
}

Status ReadMetaPod(const GoDecoder& d, const JsonValue& v, const JsonPath& path, MetaPod& out) {
  return d.ReadStruct(v, path, {"UID"}, [&](size_t, const JsonValue& fv, const JsonPath& fp) {
    return d.ReadString(fv, fp, out.uid);
  });
}

// Victims and MetaVictims: Pods (a list of pointers to `Element`) and NumPDBViolations.
template <typename Element, typename ReadElement, typename V>
Status ReadVictims(const GoDecoder& d, const JsonValue& v, const JsonPath& path, V& out,
                   ReadElement read_element) {
  return d.ReadStruct(v, path, {"Pods", "NumPDBViolations"},
                      [&](size_t field, const JsonValue& fv, const JsonPath& fp) {
                        if (field == 1) return d.ReadInt64(fv, fp, out.num_pdb_violations);
                        return d.ReadList(fv, fp, out.pods,
                                          PointerElements<Element>(d, read_element));
                      });
}

Status ReadMetaVictims(const GoDecoder& d, const JsonValue& v, const JsonPath& path,
                       MetaVictims& out) {
  return ReadVictims<MetaPod>(d, v, path, out, ReadMetaPod);
}

Status ReadMetaVictimsMap(const GoDecoder& d, const JsonValue& v, const JsonPath& path,
                          std::optional<std::map<std::string, MetaVictims>>& out) {
  return ReadOptionalMap(d, v, path, out,
                         [&](MetaVictims& m, const JsonValue& e, const JsonPath& p) {
                           return ReadMetaVictims(d, e, p, m);
                         });
}

void WriteOptionalStrings(const std::optional<std::vector<std::string>>& list, GoJsonWriter& w) {
  if (!list) return w.Null();
  w.BeginArray();
  for (const std::string& s : *list) w.String(s);
  w.EndArray();
}

void WriteFailedNodes(const std::optional<FailedNodesMap>& map, GoJsonWriter& w) {
  if (!map) return w.Null();
  w.BeginObject();
  for (const auto& [node, reason] : *map) {  // std::map: sorted by key, as Go writes maps
    w.Key(node);
    w.String(reason);
  }
  w.EndObject();
}

void WriteMetaVictims(const MetaVictims& victims, GoJsonWriter& w) {
  w.BeginObject();
  w.Key("Pods");
  w.BeginArray();
  for (const MetaPod& pod : victims.pods) {
    w.BeginObject();
    w.Key("UID");
    w.String(pod.uid);
    w.EndObject();
  }
  w.EndArray();
  w.Key("NumPDBViolations");
  w.Int(victims.num_pdb_violations);
  w.EndObject();
}

// An object of string fields, in the order given.
std::string StringFields(std::initializer_list<std::pair<std::string_view, const std::string*>> f) {
  GoJsonWriter w;
  w.BeginObject();
  for (const auto& [key, value] : f) {
    w.Key(key);
    w.String(*value);
  }
  w.EndObject();
  return w.Take();
}

}  // namespace

StatusOr<ExtenderArgs> DecodeExtenderArgs(std::string_view json) {
  return Decode<ExtenderArgs>(
      json, "ExtenderArgs",
      [](const GoDecoder& d, const JsonValue& v, const JsonPath& path, ExtenderArgs& out) {
        return d.ReadStruct(v, path, {"Pod", "Nodes", "NodeNames"},
                            [&](size_t field, const JsonValue& fv, const JsonPath& fp) {
                              switch (field) {
                                case 0: return ReadPointer(d, fv, fp, out.pod, ReadPod);
                                case 1: return ReadPointer(d, fv, fp, out.nodes, ReadNodeList);
                                default: return d.ReadOptionalStringList(fv, fp, out.node_names);
                              }
                            });
      });
}

StatusOr<Pod> DecodePod(std::string_view json) {
  return Decode<Pod>(json, "Pod", ReadPod);
}

StatusOr<Node> DecodeNode(std::string_view json) {
  return Decode<Node>(json, "Node", ReadNode);
}

std::string EncodeExtenderFilterResult(const ExtenderFilterResult& result) {
  GoJsonWriter w;
  w.BeginObject();
  w.Key("Nodes");
  if (result.nodes) {
    WriteNodeList(*result.nodes, w);
  } else {
    w.Null();
  }
  w.Key("NodeNames");
  WriteOptionalStrings(result.node_names, w);
  w.Key("FailedNodes");
  WriteFailedNodes(result.failed_nodes, w);
  w.Key("FailedAndUnresolvableNodes");
  WriteFailedNodes(result.failed_and_unresolvable_nodes, w);
  w.Key("Error");
  w.String(result.error);
  w.EndObject();
  return w.Take();
}

StatusOr<ExtenderFilterResult> DecodeExtenderFilterResult(std::string_view json) {
  return Decode<ExtenderFilterResult>(
      json, "ExtenderFilterResult",
      [](const GoDecoder& d, const JsonValue& v, const JsonPath& path, ExtenderFilterResult& out) {
        return d.ReadStruct(
            v, path, {"Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"},
            [&](size_t field, const JsonValue& fv, const JsonPath& fp) {
              switch (field) {
                case 0: return ReadPointer(d, fv, fp, out.nodes, ReadNodeList);
                case 1: return d.ReadOptionalStringList(fv, fp, out.node_names);
                case 2: return ReadFailedNodes(d, fv, fp, out.failed_nodes);
                case 3: return ReadFailedNodes(d, fv, fp, out.failed_and_unresolvable_nodes);
                default: return d.ReadString(fv, fp, out.error);
              }
            });
      });
}

std::string EncodeHostPriorityList(const HostPriorityList& list) {
  GoJsonWriter w;
  w.BeginArray();
  for (const HostPriority& p : list) {
    w.BeginObject();
    w.Key("Host");
    w.String(p.host);
    w.Key("Score");
    w.Int(p.score);
    w.EndObject();
  }
  w.EndArray();
  return w.Take();
}

StatusOr<HostPriorityList> DecodeHostPriorityList(std::string_view json) {
  return Decode<HostPriorityList>(
      json, "HostPriorityList",
      [](const GoDecoder& d, const JsonValue& v, const JsonPath& path, HostPriorityList& out) {
        return d.ReadList(
            v, path, out, [&](HostPriority& p, const JsonValue& e, const JsonPath& ep) {
              return d.ReadStruct(e, ep, {"Host", "Score"},
                                  [&](size_t field, const JsonValue& fv, const JsonPath& fp) {
                                    return field == 0 ? d.ReadString(fv, fp, p.host)
                                                      : d.ReadInt64(fv, fp, p.score);
                                  });
            });
      });
}

StatusOr<ExtenderPreemptionArgs> DecodeExtenderPreemptionArgs(std::string_view json) {
  return Decode<ExtenderPreemptionArgs>(
      json, "ExtenderPreemptionArgs",
      [](const GoDecoder& d, const JsonValue& v, const JsonPath& path,
         ExtenderPreemptionArgs& out) {
        const auto read_victims = [&](Victims& victims, const JsonValue& e, const JsonPath& p) {
          return ReadVictims<Pod>(d, e, p, victims, ReadPod);
        };
        return d.ReadStruct(
            v, path, {"Pod", "NodeNameToVictims", "NodeNameToMetaVictims"},
            [&](size_t field, const JsonValue& fv, const JsonPath& fp) {
              switch (field) {
                case 0: return ReadPointer(d, fv, fp, out.pod, ReadPod);
                case 1: return ReadOptionalMap(d, fv, fp, out.node_name_to_victims, read_victims);
                default: return ReadMetaVictimsMap(d, fv, fp, out.node_name_to_meta_victims);
              }
            });
      });
}

std::string EncodeExtenderPreemptionResult(const ExtenderPreemptionResult& result) {
  GoJsonWriter w;
  w.BeginObject();
  w.Key("NodeNameToMetaVictims");
  if (result.node_name_to_meta_victims) {
    w.BeginObject();
    for (const auto& [node, victims] : *result.node_name_to_meta_victims) {
      w.Key(node);
      WriteMetaVictims(victims, w);
    }
    w.EndObject();
  } else {
    w.Null();
  }
  w.EndObject();
  return w.Take();
}

StatusOr<ExtenderPreemptionResult> DecodeExtenderPreemptionResult(std::string_view json) {
  return Decode<ExtenderPreemptionResult>(
      json, "ExtenderPreemptionResult",
      [](const GoDecoder& d, const JsonValue& v, const JsonPath& path,
         ExtenderPreemptionResult& out) {
        return d.ReadStruct(v, path, {"NodeNameToMetaVictims"},
                            [&](size_t, const JsonValue& fv, const JsonPath& fp) {
                              return ReadMetaVictimsMap(d, fv, fp, out.node_name_to_meta_victims);
                            });
      });
}

StatusOr<ExtenderBindingArgs> DecodeExtenderBindingArgs(std::string_view json) {
  return Decode<ExtenderBindingArgs>(
      json, "ExtenderBindingArgs",
      [](const GoDecoder& d, const JsonValue& v, const JsonPath& path, ExtenderBindingArgs& out) {
        std::string* const fields[] = {&out.pod_name, &out.pod_namespace, &out.pod_uid, &out.node};
        return d.ReadStruct(v, path, {"PodName", "PodNamespace", "PodUID", "Node"},
                            [&](size_t field, const JsonValue& fv, const JsonPath& fp) {
                              return d.ReadString(fv, fp, *fields[field]);
                            });
      });
}

std::string EncodeExtenderBindingArgs(const ExtenderBindingArgs& args) {
  return StringFields({{"PodName", &args.pod_name},
                       {"PodNamespace", &args.pod_namespace},
                       {"PodUID", &args.pod_uid},
                       {"Node", &args.node}});
}

std::string EncodeExtenderBindingResult(const ExtenderBindingResult& result) {
  return StringFields({{"Error", &result.error}});
}

StatusOr<ExtenderBindingResult> DecodeExtenderBindingResult(std::string_view json) {
  return Decode<ExtenderBindingResult>(
      json, "ExtenderBindingResult",
      [](const GoDecoder& d, const JsonValue& v, const JsonPath& path, ExtenderBindingResult& out) {
        return d.ReadStruct(v, path, {"Error"},
                            [&](size_t, const JsonValue& fv, const JsonPath& fp) {
                              return d.ReadString(fv, fp, out.error);
                            });
      });
}

}  // namespace qrm::extender
