#include "qrm/state/state_codec.h"

#include <initializer_list>
#include <string_view>

#include <fmt/format.h>

#include "checkpoint/base64.h"

namespace qrm::state {
namespace {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;

constexpr std::string_view kPod = "pod";  // the root, in error messages
constexpr std::string_view kUid = "uid";
constexpr std::string_view kName = "name";
constexpr std::string_view kNamespace = "namespace";
constexpr std::string_view kPodAffinity = "pod_affinity";
constexpr std::string_view kContainers = "containers";
constexpr std::string_view kRequest = "request";
constexpr std::string_view kResources = "resources";

Value Str(std::string_view s, Allocator& alloc) {
  return Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), alloc);
}

std::string_view View(const Value& v) {
  return {v.GetString(), v.GetStringLength()};
}

// The JSON location of a map entry, e.g. pods["u1"], in error messages.
std::string Entry(std::string_view parent, std::string_view key) {
  return fmt::format("{}[\"{}\"]", parent, key);
}

// `bytes` is DeterministicBytes(message) (from a cache or just computed).
StatusOr<Value> EncodeMessage(const google::protobuf::MessageLite& message,
                              const std::string& bytes, std::string_view where, Allocator& alloc) {
  // DeterministicBytes is empty both for an empty message and on failure; only a
  // non-empty message can fail, so the two are told apart by the message's size.
  if (bytes.empty() && message.ByteSizeLong() != 0) {
    return InternalError(fmt::format("{}: cannot serialize {}", where, message.GetTypeName()));
  }
  return Str(checkpoint::Base64Encode(bytes), alloc);
}

// Checks that `obj` is an object whose members are all in `allowed`.
Status CheckObject(const Value& obj, std::string_view where,
                   std::initializer_list<std::string_view> allowed) {
  if (!obj.IsObject()) return DataLossError(fmt::format("{}: not a JSON object", where));
  for (auto it = obj.MemberBegin(); it != obj.MemberEnd(); ++it) {
    bool known = false;
    for (std::string_view a : allowed) known = known || a == View(it->name);
    if (!known) {
      return DataLossError(fmt::format("{}: unexpected member \"{}\"", where, View(it->name)));
    }
  }
  return Status::Ok();
}

StatusOr<const Value*> Required(const Value& obj, std::string_view key, std::string_view where) {
  auto it = obj.FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
  if (it == obj.MemberEnd()) {
    return DataLossError(fmt::format("{}: missing member \"{}\"", where, key));
  }
  return &it->value;
}

StatusOr<std::string> RequiredString(const Value& obj, std::string_view key,
                                     std::string_view where) {
  StatusOr<const Value*> v = Required(obj, key, where);
  if (!v.ok()) return v.status();
  if (!(*v)->IsString()) return DataLossError(fmt::format("{}.{}: not a string", where, key));
  return std::string(View(**v));
}

Status DecodeMessage(const Value& v, std::string_view where, google::protobuf::MessageLite* out) {
  if (!v.IsString()) return DataLossError(fmt::format("{}: not a string", where));
  StatusOr<std::string> bytes = checkpoint::Base64Decode(View(v), where);
  if (!bytes.ok()) return DataLossError(bytes.status().message());
  if (!out->ParseFromString(*bytes)) {
    return DataLossError(fmt::format("{}: not a serialized {}", where, out->GetTypeName()));
  }
  return Status::Ok();
}

Status DecodeContainer(const Value& v, const std::string& where, ContainerAllocation* out) {
  QRM_RETURN_IF_ERROR(CheckObject(v, where, {kRequest, kResources}));
  StatusOr<const Value*> request = Required(v, kRequest, where);
  if (!request.ok()) return request.status();
  QRM_RETURN_IF_ERROR(DecodeMessage(**request, where + ".request", &out->request));

  StatusOr<const Value*> resources = Required(v, kResources, where);
  if (!resources.ok()) return resources.status();
  const std::string resources_where = where + ".resources";
  if (!(*resources)->IsObject()) {
    return DataLossError(fmt::format("{}: not a JSON object", resources_where));
  }
  for (auto it = (*resources)->MemberBegin(); it != (*resources)->MemberEnd(); ++it) {
    const std::string resource(View(it->name));
    QRM_RETURN_IF_ERROR(
        DecodeMessage(it->value, Entry(resources_where, resource), &out->resources[resource]));
  }
  return Status::Ok();
}

Status DecodePodAt(const Value& v, const std::string& where, PodAllocation* out) {
  QRM_RETURN_IF_ERROR(CheckObject(v, where, {kUid, kName, kNamespace, kPodAffinity, kContainers}));
  StatusOr<std::string> uid = RequiredString(v, kUid, where);
  if (!uid.ok()) return uid.status();
  out->uid = std::move(*uid);
  StatusOr<std::string> name = RequiredString(v, kName, where);
  if (!name.ok()) return name.status();
  out->name = std::move(*name);
  StatusOr<std::string> ns = RequiredString(v, kNamespace, where);
  if (!ns.ok()) return ns.status();
  out->ns = std::move(*ns);

  if (v.FindMember(Value(rapidjson::StringRef(kPodAffinity.data(), kPodAffinity.size()))) !=
      v.MemberEnd()) {
    StatusOr<std::string> text = RequiredString(v, kPodAffinity, where);
    if (!text.ok()) return text.status();
    // An absent member means "no pod affinity"; an empty one was never written by us.
    StatusOr<NumaMask> mask = NumaMask::Parse(*text);
    if (!mask.ok() || mask->empty()) {
      return DataLossError(fmt::format("{}.{}: \"{}\" is not a non-empty NUMA node list{}", where,
                                       kPodAffinity, *text,
                                       mask.ok() ? "" : ": " + mask.status().message()));
    }
    out->pod_affinity = *mask;
  }

  StatusOr<const Value*> containers = Required(v, kContainers, where);
  if (!containers.ok()) return containers.status();
  const std::string containers_where = where + ".containers";
  if (!(*containers)->IsObject()) {
    return DataLossError(fmt::format("{}: not a JSON object", containers_where));
  }
  for (auto it = (*containers)->MemberBegin(); it != (*containers)->MemberEnd(); ++it) {
    const std::string container(View(it->name));
    QRM_RETURN_IF_ERROR(DecodeContainer(it->value, Entry(containers_where, container),
                                        &out->containers[container]));
  }
  return Status::Ok();
}

}  // namespace

Status EncodePod(const PodAllocation& pod, rapidjson::Document& out) {
  Allocator& alloc = out.GetAllocator();
  out.SetObject();
  const std::string pod_where(kPod);
  out.AddMember(Str(kUid, alloc), Str(pod.uid, alloc), alloc);
  out.AddMember(Str(kName, alloc), Str(pod.name, alloc), alloc);
  out.AddMember(Str(kNamespace, alloc), Str(pod.ns, alloc), alloc);
  if (pod.pod_affinity) {
    out.AddMember(Str(kPodAffinity, alloc), Str(pod.pod_affinity->ToString(), alloc), alloc);
  }
  Value containers(rapidjson::kObjectType);
  for (const auto& [name, container] : pod.containers) {
    const std::string container_where = Entry(pod_where + ".containers", name);
    Value c(rapidjson::kObjectType);
    StatusOr<Value> request =
        EncodeMessage(container.request, DeterministicBytes(container.request),
                      container_where + ".request", alloc);
    if (!request.ok()) return request.status();
    c.AddMember(Str(kRequest, alloc), std::move(*request), alloc);
    Value resources(rapidjson::kObjectType);
    for (const auto& [resource, info] : container.resources) {
      auto cached = container.resource_bytes.find(resource);
      StatusOr<Value> encoded = EncodeMessage(
          info,
          cached != container.resource_bytes.end() ? cached->second : DeterministicBytes(info),
          Entry(container_where + ".resources", resource), alloc);
      if (!encoded.ok()) return encoded.status();
      resources.AddMember(Str(resource, alloc), std::move(*encoded), alloc);
    }
    c.AddMember(Str(kResources, alloc), resources, alloc);
    containers.AddMember(Str(name, alloc), c, alloc);
  }
  out.AddMember(Str(kContainers, alloc), containers, alloc);
  return Status::Ok();
}

StatusOr<PodAllocation> DecodePod(const rapidjson::Value& data) {
  PodAllocation pod;
  QRM_RETURN_IF_ERROR(DecodePodAt(data, std::string(kPod), &pod));
  return pod;
}

namespace {

constexpr const char* kPutOp = "put";
constexpr const char* kRemoveOp = "remove_pod";

}  // namespace

StatusOr<rapidjson::Document> EncodePodRecord(const std::string& uid, const PodAllocation* pod) {
  rapidjson::Document record(rapidjson::kObjectType);
  auto& a = record.GetAllocator();
  if (pod == nullptr) {
    record.AddMember("op", rapidjson::StringRef(kRemoveOp), a);
    record.AddMember("pod_uid",
                     rapidjson::Value(uid.data(), static_cast<rapidjson::SizeType>(uid.size()), a),
                     a);
    return record;
  }
  // Encoded in the record's own allocator and moved under "pod": no copy of the pod's data.
  QRM_RETURN_IF_ERROR(EncodePod(*pod, record));
  rapidjson::Value data(rapidjson::kObjectType);
  data.Swap(record);
  record.SetObject();
  record.AddMember("op", rapidjson::StringRef(kPutOp), a);
  record.AddMember("pod", data, a);
  return record;
}

StatusOr<std::string> PodRecordUid(const rapidjson::Value& record) {
  const auto op = record.FindMember("op");
  const std::string_view name =
      op != record.MemberEnd() && op->value.IsString() ? op->value.GetString() : "";
  if (name == kRemoveOp) {
    const auto uid = record.FindMember("pod_uid");
    if (uid == record.MemberEnd() || !uid->value.IsString()) {
      return DataLossError("remove_pod without a string pod_uid");
    }
    return std::string(uid->value.GetString(), uid->value.GetStringLength());
  }
  const auto data = record.FindMember("pod");
  if (name != kPutOp || data == record.MemberEnd() || !data->value.IsObject()) {
    return DataLossError("neither {\"op\":\"put\",\"pod\":{...}} nor a remove_pod");
  }
  const auto uid = data->value.FindMember("uid");
  if (uid == data->value.MemberEnd() || !uid->value.IsString()) {
    return DataLossError("put without a string pod.uid");
  }
  return std::string(uid->value.GetString(), uid->value.GetStringLength());
}

StatusOr<std::string> ApplyPodRecord(const rapidjson::Value& record, PodResources& pods) {
  QRM_ASSIGN_OR_RETURN(std::string uid, PodRecordUid(record));
  const auto data = record.FindMember("pod");
  if (data == record.MemberEnd()) {
    pods.erase(uid);
    return uid;
  }
  QRM_ASSIGN_OR_RETURN(PodAllocation pod, DecodePod(data->value));
  for (auto& [container_name, container] : pod.containers) CacheResourceBytes(container);
  pods[uid] = std::make_shared<const PodAllocation>(std::move(pod));
  return uid;
}

}  // namespace qrm::state
