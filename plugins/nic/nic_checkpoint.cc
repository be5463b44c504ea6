#include "plugins/nic/nic_checkpoint.h"

#include <map>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/json_string.h"
#include "common/quote.h"

namespace qrm::nic {
namespace {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;

Value Str(const std::string& s, Allocator& a) {
  return Value(s.c_str(), static_cast<unsigned>(s.size()), a);
}

Value Address(const std::string& ipv4, const std::string& ipv6, Allocator& a) {
  Value v(rapidjson::kObjectType);
  if (!ipv4.empty()) v.AddMember("ipv4", Str(ipv4, a), a);
  if (!ipv6.empty()) v.AddMember("ipv6", Str(ipv6, a), a);
  return v;
}

Value EncodeNic(const NicState& state, const Nic& nic, Allocator& a) {
  Value v(rapidjson::kObjectType);
  v.AddMember("interface_name", Str(nic.key.name, a), a);
  v.AddMember("numa_node", Value(nic.numa_node), a);
  v.AddMember("address", Address(nic.ipv4, nic.ipv6, a), a);
  if (!nic.netns_path.empty()) v.AddMember("netns", Str(nic.netns_path, a), a);
  v.AddMember("speed_mbps", Value(nic.speed_mbps), a);
  v.AddMember("bandwidth_allocated_mbps", Value(state.AllocatedMbps(nic.key)), a);
  return v;
}

Value EncodeAssignment(const PodNics& pod, const NicAssignment& n, Allocator& a) {
  Value v(rapidjson::kObjectType);
  v.AddMember("pod_name", Str(pod.name, a), a);
  v.AddMember("pod_namespace", Str(pod.ns, a), a);
  v.AddMember("interface_name", Str(n.nic.name, a), a);
  v.AddMember("netns_name", Str(n.nic.netns, a), a);
  if (!n.netns_path.empty()) v.AddMember("netns", Str(n.netns_path, a), a);
  v.AddMember("numa_node", Value(n.numa_node), a);
  v.AddMember("bandwidth_mbps", Value(n.bandwidth_mbps), a);
  v.AddMember("address", Address(n.ipv4, n.ipv6, a), a);
  v.AddMember("hint_preferred", Value(n.hint_preferred), a);
  return v;
}

// --- Decoding --------------------------------------------------------------------------------

Status Malformed(const std::string& key, const Value& value, std::string_view expected) {
  return DataLossError(fmt::format("checkpoint key {}: invalid value {} (expected {})", key,
                                   Quote(JsonText(value)), expected));
}

// Reads one field of a JSON object; `optional` fields keep `out` when absent.
class Fields {
 public:
  Fields(const Value& obj, std::string key) : obj_(obj), key_(std::move(key)) {}

  Status String(const char* name, std::string* out, bool optional = false) const {
    const Value* v = Get(name);
    if (v == nullptr) return optional ? Status::Ok() : Missing(name);
    if (!v->IsString()) return Malformed(key_ + "." + name, *v, "a string");
    out->assign(v->GetString(), v->GetStringLength());
    return Status::Ok();
  }
  Status Int(const char* name, int64_t* out) const {
    const Value* v = Get(name);
    if (v == nullptr) return Missing(name);
    if (!v->IsInt64()) return Malformed(key_ + "." + name, *v, "an integer");
    *out = v->GetInt64();
    return Status::Ok();
  }
  Status Bool(const char* name, bool* out) const {
    const Value* v = Get(name);
    if (v == nullptr) return Missing(name);
    if (!v->IsBool()) return Malformed(key_ + "." + name, *v, "true or false");
    *out = v->GetBool();
    return Status::Ok();
  }
  StatusOr<const Value*> Object(const char* name) const {
    const Value* v = Get(name);
    if (v == nullptr) return Missing(name);
    if (!v->IsObject()) return Malformed(key_ + "." + name, *v, "a JSON object");
    return v;
  }

 private:
  const Value* Get(const char* name) const {
    auto it = obj_.FindMember(name);
    return it == obj_.MemberEnd() ? nullptr : &it->value;
  }
  Status Missing(const char* name) const {
    return DataLossError(fmt::format("checkpoint key {}.{} is missing", key_, name));
  }
  const Value& obj_;
  std::string key_;
};

StatusOr<NicAssignment> DecodeAssignment(const Value& v, const std::string& key,
                                         std::string* pod_name, std::string* pod_ns) {
  if (!v.IsObject()) return Malformed(key, v, "a JSON object");
  const Fields f(v, key);
  NicAssignment n;
  int64_t node = -1;
  QRM_RETURN_IF_ERROR(f.String("pod_name", pod_name));
  QRM_RETURN_IF_ERROR(f.String("pod_namespace", pod_ns));
  QRM_RETURN_IF_ERROR(f.String("interface_name", &n.nic.name));
  QRM_RETURN_IF_ERROR(f.String("netns_name", &n.nic.netns));
  QRM_RETURN_IF_ERROR(f.String("netns", &n.netns_path, /*optional=*/true));
  QRM_RETURN_IF_ERROR(f.Int("numa_node", &node));
  QRM_RETURN_IF_ERROR(f.Int("bandwidth_mbps", &n.bandwidth_mbps));
  QRM_RETURN_IF_ERROR(f.Bool("hint_preferred", &n.hint_preferred));
  auto address = f.Object("address");
  if (!address.ok()) return address.status();
  const Fields addr(**address, key + ".address");
  QRM_RETURN_IF_ERROR(addr.String("ipv4", &n.ipv4, true));
  QRM_RETURN_IF_ERROR(addr.String("ipv6", &n.ipv6, true));
  if (n.nic.name.empty()) return Malformed(key + ".interface_name", v["interface_name"], "a name");
  if (node < -1 || node >= NumaMask::kMaxNodes) {
    return Malformed(key + ".numa_node", v["numa_node"], "-1 or a NUMA node id");
  }
  if (n.bandwidth_mbps < 0) {
    return Malformed(key + ".bandwidth_mbps", v["bandwidth_mbps"], "a number of Mb/s >= 0");
  }
  n.numa_node = static_cast<int>(node);
  return n;
}

}  // namespace

void AddMachineState(const NicState& state, rapidjson::Value& data, Allocator& a) {
  std::map<int, Value> by_node;  // node -> array of NICs
  for (const Nic& nic : state.nics()) {
    auto [it, _] = by_node.try_emplace(nic.numa_node, rapidjson::kArrayType);
    it->second.PushBack(EncodeNic(state, nic, a), a);
  }
  Value machine_state(rapidjson::kObjectType);
  for (auto& [node, nics] : by_node) {
    Value entry(rapidjson::kObjectType);
    entry.AddMember("nics", nics, a);
    machine_state.AddMember(Str(std::to_string(node), a), entry, a);
  }
  data.AddMember("machineState", machine_state, a);
}

rapidjson::Document EncodeCheckpoint(const NicState& state) {
  rapidjson::Document doc;
  doc.SetObject();
  Allocator& a = doc.GetAllocator();
  AddMachineState(state, doc, a);
  Value pod_entries(rapidjson::kObjectType);
  for (const auto& [uid, pod] : state.pods()) {
    Value containers(rapidjson::kObjectType);
    for (const auto& [name, n] : pod.containers) {
      containers.AddMember(Str(name, a), EncodeAssignment(pod, n, a), a);
    }
    pod_entries.AddMember(Str(uid, a), containers, a);
  }
  doc.AddMember("pod_entries", pod_entries, a);
  return doc;
}

Status RestoreCheckpoint(const rapidjson::Value& data, NicState& state,
                         std::vector<std::string>* warnings) {
  const Fields top(data, "data");
  // machineState is written for operators and never read back, but must be well-formed.
  QRM_RETURN_IF_ERROR(top.Object("machineState").status());
  auto pod_entries = top.Object("pod_entries");
  if (!pod_entries.ok()) return pod_entries.status();

  for (const auto& p : (*pod_entries)->GetObject()) {
    const std::string uid = JsonString(p.name);
    const std::string pod_key = "pod_entries." + uid;
    if (!p.value.IsObject()) return Malformed(pod_key, p.value, "a JSON object");
    for (const auto& c : p.value.GetObject()) {
      const std::string container = JsonString(c.name);
      std::string pod_name, pod_ns;
      QRM_ASSIGN_OR_RETURN(
          auto n,
          DecodeAssignment(c.value, fmt::format("{}.{}", pod_key, container), &pod_name, &pod_ns));
      state.AddRecorded(uid, pod_name, pod_ns, container, n);
    }
  }
  for (std::string& line : RecordDiscrepancies(state)) warnings->push_back(std::move(line));
  return Status::Ok();
}

}  // namespace qrm::nic
