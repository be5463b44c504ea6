#include "plugins/memory/memory_checkpoint.h"

#include <charconv>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/json_string.h"
#include "common/quote.h"

namespace qrm::memory {
namespace {

using rapidjson::Value;

// --- Encoding --------------------------------------------------------------------------------

class Encoder {
 public:
  explicit Encoder(rapidjson::Document::AllocatorType& a) : a_(a) {}
  Value Str(const std::string& s) { return Value(s.c_str(), static_cast<unsigned>(s.size()), a_); }
  Value Bytes(uint64_t n) { return Str(std::to_string(n)); }
  rapidjson::Document::AllocatorType& a() { return a_; }

 private:
  rapidjson::Document::AllocatorType& a_;
};

Value EncodeNode(Encoder& e, const MemoryState& state, const NodeMemory& node) {
  Value pod_entries(rapidjson::kObjectType);
  for (const auto& [uid, pod] : state.pods()) {
    Value containers(rapidjson::kObjectType);
    for (const auto& [name, c] : pod.containers) {
      auto share = c.bytes_by_node.find(node.id);
      if (share != c.bytes_by_node.end()) {
        containers.AddMember(e.Str(name), e.Bytes(share->second), e.a());
      }
    }
    if (!containers.ObjectEmpty()) pod_entries.AddMember(e.Str(uid), containers, e.a());
  }
  Value v(rapidjson::kObjectType);
  v.AddMember("Allocated", e.Bytes(state.AllocatedOn(node.id)), e.a());
  v.AddMember("allocatable", e.Bytes(node.allocatable_bytes()), e.a());
  v.AddMember("free", e.Bytes(state.FreeOn(node.id)), e.a());
  v.AddMember("pod_entries", pod_entries, e.a());
  v.AddMember("systemReserved", e.Bytes(node.reserved_bytes), e.a());
  v.AddMember("total", e.Bytes(node.total_bytes), e.a());
  return v;
}

Value EncodeContainer(Encoder& e, const PodMemory& pod, const ContainerMemory& c) {
  Value v(rapidjson::kObjectType);
  v.AddMember("pod_name", e.Str(pod.name), e.a());
  v.AddMember("pod_namespace", e.Str(pod.ns), e.a());
  v.AddMember("quantity", e.Bytes(c.bytes), e.a());
  v.AddMember("numa_nodes", e.Str(c.nodes.ToString()), e.a());
  v.AddMember("hint_preferred", Value(c.hint_preferred), e.a());
  v.AddMember("role", e.Str(c.role), e.a());
  v.AddMember("numa_exclusive", Value(c.numa_exclusive), e.a());
  return v;
}

// --- Decoding --------------------------------------------------------------------------------

Status Malformed(const std::string& key, const Value& value, std::string_view expected) {
  return DataLossError(fmt::format("checkpoint key {}: invalid value {} (expected {})", key,
                                   Quote(JsonText(value)), expected));
}
Status Missing(const std::string& key) {
  return DataLossError(fmt::format("checkpoint key {} is missing", key));
}

StatusOr<const Value*> Member(const Value& obj, const char* name, const std::string& key) {
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd()) return Missing(key + "." + name);
  return &it->value;
}

StatusOr<const Value*> ObjectMember(const Value& obj, const char* name, const std::string& key) {
  auto v = Member(obj, name, key);
  if (!v.ok()) return v;
  if (!(*v)->IsObject()) return Malformed(key + "." + name, **v, "a JSON object");
  return v;
}

StatusOr<std::string> StringMember(const Value& obj, const char* name, const std::string& key) {
  QRM_ASSIGN_OR_RETURN(auto v, Member(obj, name, key));
  if (!(v)->IsString()) return Malformed(key + "." + name, *v, "a string");
  return std::string((v)->GetString(), (v)->GetStringLength());
}

StatusOr<bool> BoolMember(const Value& obj, const char* name, const std::string& key) {
  QRM_ASSIGN_OR_RETURN(auto v, Member(obj, name, key));
  if (!(v)->IsBool()) return Malformed(key + "." + name, *v, "true or false");
  return (v)->GetBool();
}

StatusOr<uint64_t> ParseBytes(const Value& v, const std::string& key) {
  if (!v.IsString()) return Malformed(key, v, "a decimal string of bytes");
  const std::string_view text(v.GetString(), v.GetStringLength());
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return Malformed(key, v, "a decimal string of bytes");
  }
  return n;
}

StatusOr<uint64_t> BytesMember(const Value& obj, const char* name, const std::string& key) {
  QRM_ASSIGN_OR_RETURN(auto v, Member(obj, name, key));
  return ParseBytes(*v, key + "." + name);
}

// Checks the machine the file was written on against `state`'s.
Status CheckMachine(const Value& data, const MemoryState& state,
                    std::vector<std::string>* warnings) {
  auto machine = ObjectMember(data, "machine", "data");
  if (!machine.ok()) return machine.status();
  QRM_ASSIGN_OR_RETURN(auto nodes_text, StringMember(**machine, "numa_nodes", "machine"));
  if (nodes_text != state.NodeMask().ToString()) {
    return FailedPreconditionError(fmt::format(
        "the checkpoint was written on a machine with NUMA nodes \"{}\", this machine has \"{}\"",
        nodes_text, state.NodeMask().ToString()));
  }
  QRM_ASSIGN_OR_RETURN(auto totals, ObjectMember(**machine, "node_total_bytes", "machine"));
  for (const NodeMemory& node : state.nodes()) {
    const std::string id = std::to_string(node.id);
    QRM_ASSIGN_OR_RETURN(auto total, BytesMember(*totals, id.c_str(), "machine.node_total_bytes"));
    if (total != node.total_bytes && warnings != nullptr) {
      warnings->push_back(
          fmt::format("NUMA node {} had {} bytes when the checkpoint was written, it has {} now",
                      node.id, total, node.total_bytes));
    }
  }
  return Status::Ok();
}

// The per-node shares of every container, from machineState.memory[node].pod_entries, checked
// against each node's recorded "Allocated".
using Shares = std::map<std::string, std::map<std::string, std::map<int, uint64_t>>>;
StatusOr<Shares> ReadShares(const Value& data, const MemoryState& state) {
  QRM_ASSIGN_OR_RETURN(auto machine_state, ObjectMember(data, "machineState", "data"));
  auto memory = ObjectMember(*machine_state, "memory", "machineState");
  if (!memory.ok()) return memory.status();
  Shares shares;
  for (const auto& n : (*memory)->GetObject()) {
    const std::string key = "machineState.memory." + JsonString(n.name);
    int id = -1;
    const std::string_view id_text = JsonStringView(n.name);
    const auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
    if (ec != std::errc() || end != id_text.data() + id_text.size() || !state.Node(id)) {
      return DataLossError(fmt::format("checkpoint key {}: not a NUMA node of the machine", key));
    }
    if (!n.value.IsObject()) return Malformed(key, n.value, "a JSON object");
    QRM_ASSIGN_OR_RETURN(auto allocated, BytesMember(n.value, "Allocated", key));
    QRM_ASSIGN_OR_RETURN(auto entries, ObjectMember(n.value, "pod_entries", key));
    uint64_t sum = 0;
    for (const auto& p : (entries)->GetObject()) {
      const std::string pod_key = key + ".pod_entries." + JsonString(p.name);
      if (!p.value.IsObject()) return Malformed(pod_key, p.value, "a JSON object");
      for (const auto& c : p.value.GetObject()) {
        QRM_ASSIGN_OR_RETURN(auto bytes, ParseBytes(c.value, pod_key + "." + JsonString(c.name)));
        shares[JsonString(p.name)][JsonString(c.name)][id] = bytes;
        sum += bytes;
      }
    }
    if (sum != allocated) {
      return DataLossError(
          fmt::format("checkpoint key {}.Allocated: \"{}\" but its pod_entries "
                      "sum to {}",
                      key, allocated, sum));
    }
  }
  return shares;
}

}  // namespace

void AddMachineState(const MemoryState& state, rapidjson::Value& data,
                     rapidjson::Document::AllocatorType& a) {
  Encoder e(a);
  Value memory(rapidjson::kObjectType);
  for (const NodeMemory& node : state.nodes()) {
    memory.AddMember(e.Str(std::to_string(node.id)), EncodeNode(e, state, node), a);
  }
  Value machine_state(rapidjson::kObjectType);
  machine_state.AddMember("memory", memory, a);
  data.AddMember("machineState", machine_state, a);
}

rapidjson::Document EncodeCheckpoint(const MemoryState& state) {
  rapidjson::Document doc;
  doc.SetObject();
  Encoder e(doc.GetAllocator());
  AddMachineState(state, doc, e.a());

  Value totals(rapidjson::kObjectType);
  for (const NodeMemory& node : state.nodes()) {
    totals.AddMember(e.Str(std::to_string(node.id)), e.Bytes(node.total_bytes), e.a());
  }
  Value entries(rapidjson::kObjectType);
  for (const auto& [uid, pod] : state.pods()) {
    Value containers(rapidjson::kObjectType);
    for (const auto& [name, c] : pod.containers) {
      containers.AddMember(e.Str(name), EncodeContainer(e, pod, c), e.a());
    }
    entries.AddMember(e.Str(uid), containers, e.a());
  }
  Value machine(rapidjson::kObjectType);
  machine.AddMember("numa_nodes", e.Str(state.NodeMask().ToString()), e.a());
  machine.AddMember("node_total_bytes", totals, e.a());

  doc.AddMember("pod_resource_entries", entries, e.a());
  doc.AddMember("machine", machine, e.a());
  return doc;
}

Status RestoreCheckpoint(const rapidjson::Value& data, MemoryState& state,
                         std::vector<std::string>* warnings) {
  QRM_RETURN_IF_ERROR(CheckMachine(data, state, warnings));
  QRM_ASSIGN_OR_RETURN(auto shares, ReadShares(data, state));
  QRM_ASSIGN_OR_RETURN(auto entries, ObjectMember(data, "pod_resource_entries", "data"));

  for (const auto& p : (entries)->GetObject()) {
    const std::string uid = JsonString(p.name);
    const std::string pod_key = "pod_resource_entries." + uid;
    if (!p.value.IsObject()) return Malformed(pod_key, p.value, "a JSON object");
    for (const auto& c : p.value.GetObject()) {
      const std::string container = JsonString(c.name);
      const std::string key = fmt::format("{}.{}", pod_key, container);
      if (!c.value.IsObject()) return Malformed(key, c.value, "a JSON object");
      auto pod_name = StringMember(c.value, "pod_name", key);
      auto pod_ns = StringMember(c.value, "pod_namespace", key);
      auto bytes = BytesMember(c.value, "quantity", key);
      auto nodes_text = StringMember(c.value, "numa_nodes", key);
      auto preferred = BoolMember(c.value, "hint_preferred", key);
      auto role = StringMember(c.value, "role", key);
      auto exclusive = BoolMember(c.value, "numa_exclusive", key);
      for (const Status* s :
           {&pod_name.status(), &pod_ns.status(), &bytes.status(), &nodes_text.status(),
            &preferred.status(), &role.status(), &exclusive.status()}) {
        if (!s->ok()) return *s;
      }
      auto nodes = NumaMask::Parse(*nodes_text);
      if (!nodes.ok()) {
        return DataLossError(
            fmt::format("checkpoint key {}.numa_nodes: {}", key, nodes.status().message()));
      }
      ContainerMemory memory;
      memory.bytes = *bytes;
      memory.nodes = *nodes;
      memory.hint_preferred = *preferred;
      memory.role = *role;
      memory.numa_exclusive = *exclusive;
      if (auto pod_shares = shares.find(uid); pod_shares != shares.end()) {
        if (auto mine = pod_shares->second.find(container); mine != pod_shares->second.end()) {
          memory.bytes_by_node = std::move(mine->second);
          pod_shares->second.erase(mine);
        }
      }
      Status added = state.Add(uid, *pod_name, *pod_ns, container, std::move(memory));
      if (added.code() == StatusCode::kInvalidArgument) {
        return DataLossError(fmt::format("checkpoint key {}: {}", key, added.message()));
      }
      if (!added.ok()) return added.WithContext(fmt::format("checkpoint key {}", key));
    }
  }
  // A share in machineState that no pod_resource_entries container claims is corruption.
  for (const auto& [uid, containers] : shares) {
    for (const auto& [container, by_node] : containers) {
      return DataLossError(
          fmt::format("checkpoint key machineState.memory.{}.pod_entries.{}.{}: no such entry in "
                      "pod_resource_entries",
                      by_node.begin()->first, uid, container));
    }
  }
  return Status::Ok();
}

}  // namespace qrm::memory
