#include "cluster/objects/node_extended_resources.h"

#include <optional>

#include <fmt/format.h>

#include "cluster/kube/json_pointer.h"
#include "cluster/kube/kube_names.h"
#include "cluster/objects/json_io.h"

namespace qrm::cluster {
namespace {

using Quantities = std::map<std::string, Quantity>;

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// The name part of a qualified name: 1-63 of [A-Za-z0-9._-], starting and ending alphanumeric.
bool IsQualifiedNamePart(std::string_view s) {
  if (s.empty() || s.size() > 63 || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// Why `name` is not an extended resource name, or nullopt when it is one.
std::optional<std::string> ExtendedNameProblem(std::string_view name) {
  constexpr std::string_view kRequests = "requests.";
  const size_t slash = name.find('/');
  if (slash == std::string_view::npos) {
    return "a name without a domain prefix is the kubelet's (cpu, memory, pods, ...)";
  }
  if (name.find("kubernetes.io/") != std::string_view::npos) {
    return "the kubernetes.io/ prefix is Kubernetes' own";
  }
  if (name.starts_with(kRequests)) return "an extended resource must not start with requests.";
  const std::string prefix = std::string(kRequests) + std::string(name.substr(0, slash));
  if (!kube::IsDnsSubdomain(prefix)) {
    return "the prefix must be a lowercase DNS subdomain of at most 244 characters";
  }
  if (!IsQualifiedNamePart(name.substr(slash + 1))) {
    return "the name after the prefix must be 1-63 of [A-Za-z0-9._-], starting and ending "
           "alphanumeric";
  }
  return std::nullopt;
}

// status.<list> of the node, by name; absent (or null) reads as empty.
StatusOr<std::optional<Quantities>> ReadList(const json::Field& node, const char* list) {
  QRM_ASSIGN_OR_RETURN(std::optional<json::Field> status, json::Member(node, "status"));
  if (!status) return std::optional<Quantities>();
  QRM_ASSIGN_OR_RETURN(std::optional<json::Field> field, json::Member(*status, list));
  if (!field) return std::optional<Quantities>();
  Quantities out;
  QRM_RETURN_IF_ERROR(
      json::ForEachMember(*field, [&](std::string_view name, const json::Field& value) -> Status {
        QRM_ASSIGN_OR_RETURN(Quantity q, json::QuantityOf(value));
        out.emplace(std::string(name), q);
        return Status::Ok();
      }));
  return std::optional<Quantities>(std::move(out));
}

class PatchWriter {
 public:
  PatchWriter() { w_.StartArray(); }
  void Op(const char* op, const std::string& path, const std::optional<std::string>& value) {
    w_.StartObject();
    json::WriteString(w_, "op", op);
    json::WriteString(w_, "path", path);
    if (value) json::WriteString(w_, "value", *value);
    w_.EndObject();
  }
  void EmptyObject(const std::string& path) {  // add an absent map before its members
    w_.StartObject();
    json::WriteString(w_, "op", "add");
    json::WriteString(w_, "path", path);
    w_.Key("value");
    w_.StartObject();
    w_.EndObject();
    w_.EndObject();
  }
  std::string Finish() {
    w_.EndArray();
    return std::string(buffer_.GetString(), buffer_.GetSize());
  }

 private:
  rapidjson::StringBuffer buffer_;
  json::Writer w_{buffer_};
};

// One of the node's lists as read, and how the patch reaches it.
struct NodeList {
  const char* name = nullptr;  // "capacity", "allocatable"
  std::optional<Quantities> current;
  bool created = false;  // the patch has added the absent map already
};

// The operation for one resource in one list; true when one was written. `want` is nullopt
// for a resource to remove.
bool Reconcile(PatchWriter& patch, bool status_exists, NodeList& list, const std::string& name,
               const std::optional<Quantity>& want) {
  const std::string path = fmt::format("/status/{}/{}", list.name, kube::EscapeJsonPointer(name));
  const Quantity* have = nullptr;
  if (list.current) {
    auto it = list.current->find(name);
    if (it != list.current->end()) have = &it->second;
  }
  if (!want) {
    if (have == nullptr) return false;
    patch.Op("remove", path, std::nullopt);
    return true;
  }
  if (have != nullptr && *have == *want) return false;
  if (!list.current && !list.created) {
    if (!status_exists) patch.EmptyObject("/status");
    patch.EmptyObject(fmt::format("/status/{}", list.name));
    list.created = true;
  }
  patch.Op(have == nullptr ? "add" : "replace", path, want->ToString());
  return true;
}

}  // namespace

bool IsExtendedResourceName(std::string_view name) {
  return !ExtendedNameProblem(name).has_value();
}

Status ValidateExtendedResourceName(std::string_view name) {
  std::optional<std::string> problem = ExtendedNameProblem(name);
  if (!problem) return Status::Ok();
  return InvalidArgumentError(
      fmt::format("resource \"{}\" is not an extended resource name: {}", name, *problem));
}

StatusOr<ExtendedResourcePatch> BuildExtendedResourcePatch(const std::string& node_json,
                                                           const ExtendedResources& desired,
                                                           const std::set<std::string>& published) {
  for (const auto& [name, figures] : desired) {
    QRM_RETURN_IF_ERROR(ValidateExtendedResourceName(name));
  }
  QRM_ASSIGN_OR_RETURN(rapidjson::Document doc, json::Parse(node_json, "the Node"));
  const json::Field node{&doc, ""};
  QRM_RETURN_IF_ERROR(json::RequireObject(node));
  QRM_ASSIGN_OR_RETURN(std::optional<json::Field> status, json::Member(node, "status"));
  NodeList capacity{"capacity", {}}, allocatable{"allocatable", {}};
  QRM_ASSIGN_OR_RETURN(capacity.current, ReadList(node, "capacity"));
  QRM_ASSIGN_OR_RETURN(allocatable.current, ReadList(node, "allocatable"));
  // Every name either list may need an operation for, sorted (a stable patch text).
  std::set<std::string> names;
  for (const auto& [name, figures] : desired) names.insert(name);
  for (const std::string& name : published) {
    if (!desired.contains(name) && IsExtendedResourceName(name)) names.insert(name);
  }
  ExtendedResourcePatch out;
  PatchWriter patch;
  for (const std::string& name : names) {
    auto it = desired.find(name);
    const bool keep = it != desired.end();
    const bool had = capacity.current && capacity.current->contains(name);
    bool changed = Reconcile(patch, status.has_value(), capacity, name,
                             keep ? std::optional(it->second.capacity) : std::nullopt);
    changed |= Reconcile(patch, status.has_value() || capacity.created, allocatable, name,
                         keep ? std::optional(it->second.allocatable) : std::nullopt);
    if (!changed) continue;
    (!keep ? out.removed : had ? out.changed : out.added).push_back(name);
  }
  out.json = patch.Finish();
  return out;
}

}  // namespace qrm::cluster
