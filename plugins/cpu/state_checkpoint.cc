#include "plugins/cpu/state_checkpoint.h"

#include <cstring>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "common/json_string.h"
#include "common/quote.h"
#include "plugins/cpu/cpu_ledger.h"

namespace qrm::cpu {
namespace {

using rapidjson::Value;

std::string MachineSummary(const std::string& cpus,
                           const std::map<std::string, std::string>& nodes) {
  std::string text = "cpus " + (cpus.empty() ? std::string("none") : cpus) + ", nodes";
  for (const auto& [node, list] : nodes)
    text += fmt::format(" {}:{}", node, list.empty() ? "-" : list);
  return text;
}

std::map<std::string, std::string> LayoutNodes(const CpuLayout& layout) {
  std::map<std::string, std::string> nodes;
  for (const auto& [node, cpus] : layout.node_cpus()) nodes[std::to_string(node)] = cpus.ToString();
  return nodes;
}

// Marks an optional member present with the wrong type.
const Value kWrongType;

class Decoder {
 public:
  Decoder(const CpuLayout& layout, const std::string& path) : layout_(layout), path_(path) {}

  StatusOr<CpuState> Decode(const Value& data) {
    QRM_RETURN_IF_ERROR(
        OnlyKeys(data, "data", {"machineState", "pod_entries", "pools", "machine"}));
    QRM_RETURN_IF_ERROR(CheckMachine(data));
    CpuState state;
    const Value* pools = Member(data, "pools");
    if (pools == nullptr || !pools->IsObject()) return Bad("data", "needs a \"pools\" object");
    QRM_RETURN_IF_ERROR(OnlyKeys(*pools, "pools", {"reclaimed_size"}));
    // A size, or "auto" (kReclaimedAuto).
    const Value* size = Member(*pools, "reclaimed_size");
    if (size != nullptr && size->IsString() && std::string_view(size->GetString()) == "auto") {
      state.reclaimed_size = kReclaimedAuto;
    } else if (size != nullptr && size->IsInt() && size->GetInt() >= 0) {
      state.reclaimed_size = size->GetInt();
    } else {
      return Bad("pools", "needs \"reclaimed_size\": a whole number from 0, or \"auto\"");
    }

    const Value* pods = Member(data, "pod_entries");
    if (pods == nullptr || !pods->IsObject()) return Bad("data", "needs a \"pod_entries\" object");
    CpuSet dedicated;
    for (const auto& p : pods->GetObject()) {
      const std::string uid(p.name.GetString(), p.name.GetStringLength());
      if (!p.value.IsObject()) return Bad("pod " + uid, "must be an object");
      for (const auto& c : p.value.GetObject()) {
        const std::string name(c.name.GetString(), c.name.GetStringLength());
        const std::string where = fmt::format("pod {} container {}", Quote(uid), Quote(name));
        StatusOr<ContainerAllocation> entry = DecodeContainer(c.value, where);
        if (!entry.ok()) return entry.status();
        if (entry->dedicated()) {
          if (entry->cpuset.Overlaps(dedicated)) {
            return Bad(where, fmt::format("dedicated CPUs {} are also held by another container",
                                          entry->cpuset.Intersection(dedicated).ToString()));
          }
          dedicated = dedicated.Union(entry->cpuset);
        }
        state.Put(uid, name, std::move(*entry));
      }
    }
    return state;
  }

 private:
  static const Value* Member(const Value& object, const char* key) {
    auto it = object.FindMember(key);
    return it == object.MemberEnd() ? nullptr : &it->value;
  }

  Status Bad(const std::string& where, const std::string& what) const {
    return DataLossError(fmt::format("state file {}: {}: {}", path_, where, what));
  }

  Status OnlyKeys(const Value& object, const std::string& where,
                  std::initializer_list<const char*> known) const {
    if (!object.IsObject()) return Bad(where, "must be an object");
    for (const auto& m : object.GetObject()) {
      const std::string key(m.name.GetString(), m.name.GetStringLength());
      bool ok = false;
      for (const char* k : known) ok = ok || key == k;
      if (!ok) return Bad(where, fmt::format("unknown key {}", Quote(key)));
    }
    return Status::Ok();
  }

  Status CheckMachine(const Value& data) const {
    const Value* machine = Member(data, "machine");
    if (machine == nullptr || !machine->IsObject())
      return Bad("data", "needs a \"machine\" object");
    QRM_RETURN_IF_ERROR(OnlyKeys(*machine, "machine", {"cpus", "nodes"}));
    const Value* cpus = Member(*machine, "cpus");
    const Value* nodes = Member(*machine, "nodes");
    if (cpus == nullptr || !cpus->IsString() || nodes == nullptr || !nodes->IsObject()) {
      return Bad("machine", "needs string \"cpus\" and object \"nodes\"");
    }
    std::map<std::string, std::string> stored_nodes;
    for (const auto& n : nodes->GetObject()) {
      if (!n.value.IsString()) return Bad("machine.nodes", "values must be CPU lists");
      stored_nodes[JsonString(n.name)] = JsonString(n.value);
    }
    const std::string stored = MachineSummary(JsonString(*cpus), stored_nodes);
    const std::string here = MachineSummary(layout_.online().ToString(), LayoutNodes(layout_));
    if (stored == here) return Status::Ok();
    return OtherCpuLayoutError(path_, stored, here);
  }

  StatusOr<ContainerAllocation> DecodeContainer(const Value& v, const std::string& where) const {
    QRM_RETURN_IF_ERROR(OnlyKeys(v, where,
                                 {"pod_namespace", "pod_name", "qos_level", "role", "numa_binding",
                                  "numa_exclusive", "request_milli", "cpuset", "numa_nodes"}));
    const auto str = [&](const char* key) -> const Value* {
      const Value* m = Member(v, key);
      return m != nullptr && m->IsString() ? m : nullptr;
    };
    // Optional keys: written only when they differ from their default, which keeps the file
    // (rewritten on every admission) small for the common pool containers.
    const auto optional = [&](const char* key, bool (Value::*is)() const) -> const Value* {
      const Value* m = Member(v, key);
      return m == nullptr || (m->*is)() ? m : &kWrongType;
    };
    const Value* ns = str("pod_namespace");
    const Value* name = str("pod_name");
    const Value* level = str("qos_level");
    const Value* cpuset = str("cpuset");
    const Value* request = Member(v, "request_milli");
    const Value* role = optional("role", &Value::IsString);
    const Value* numa = optional("numa_nodes", &Value::IsString);
    const Value* binding = optional("numa_binding", &Value::IsBool);
    const Value* exclusive = optional("numa_exclusive", &Value::IsBool);
    if (!ns || !name || !level || !cpuset || request == nullptr || !request->IsInt64() ||
        role == &kWrongType || numa == &kWrongType || binding == &kWrongType ||
        exclusive == &kWrongType) {
      return Bad(where,
                 "needs strings pod_namespace, pod_name, qos_level, cpuset, integer "
                 "request_milli, and optionally strings role, numa_nodes and booleans "
                 "numa_binding, numa_exclusive");
    }
    ContainerAllocation c;
    c.pod_namespace = JsonString(*ns);
    c.pod_name = JsonString(*name);
    StatusOr<qos::QosLevel> parsed_level = qos::ParseQosLevel(JsonStringView(*level));
    if (!parsed_level.ok()) {
      return Bad(where, fmt::format("unknown qos_level {}", Quote(JsonStringView(*level))));
    }
    c.level = *parsed_level;
    if (role) c.role = JsonString(*role);
    if (binding) c.numa_binding = binding->GetBool();
    if (exclusive) c.numa_exclusive = exclusive->GetBool();
    c.request_milli = request->GetInt64();
    StatusOr<CpuSet> cpus = CpuSet::Parse(JsonStringView(*cpuset));
    if (!cpus.ok()) return Bad(where, "cpuset: " + cpus.status().message());
    c.cpuset = *cpus;
    if (numa) {
      StatusOr<NumaMask> nodes = NumaMask::Parse(JsonStringView(*numa));
      if (!nodes.ok()) return Bad(where, "numa_nodes: " + nodes.status().message());
      c.numa_nodes = *nodes;
    }
    if (c.request_milli < 0)
      return Bad(where, fmt::format("request_milli {} is negative", c.request_milli));
    if (c.dedicated() && (c.cpuset.Empty() || !c.cpuset.IsSubsetOf(layout_.online()))) {
      return Bad(where, fmt::format("dedicated cpuset {} is empty or not on this machine ({})",
                                    c.cpuset.ToString(), layout_.online().ToString()));
    }
    if (c.numa_bound() && c.numa_nodes.empty()) {
      return Bad(where, "NUMA-bound but numa_nodes is empty");
    }
    return c;
  }

  const CpuLayout& layout_;
  const std::string& path_;
};

}  // namespace

rapidjson::Document EncodeState(const CpuLayout& layout, const CpuState& state) {
  rapidjson::Document doc;
  doc.SetObject();
  auto& a = doc.GetAllocator();
  const auto str = [&a](const std::string& s) {
    return Value(s.c_str(), static_cast<rapidjson::SizeType>(s.size()), a);
  };

  const CpuPools& p = state.pools;
  AddMachineState(layout, p, doc, a);

  // Strings of `state` are referenced, not copied (the document is written before the state
  // can change). Most containers run on a whole pool, whose text is made once, in the
  // document's allocator (so it lives as long as the document), and referenced by all of them.
  const auto ref = [](std::string_view s) {
    return Value(rapidjson::StringRef(s.data(), static_cast<rapidjson::SizeType>(s.size())));
  };
  const auto intern = [&a](const std::string& s) {
    char* buf = static_cast<char*>(a.Malloc(s.size() + 1));
    std::memcpy(buf, s.c_str(), s.size() + 1);
    return std::string_view(buf, s.size());
  };
  const std::string_view shared = intern(p.shared.ToString());
  const std::string_view reclaimed = intern(p.reclaimed.ToString());
  const std::string_view reserved = intern(p.reserved.ToString());
  const auto cpuset_text = [&](const CpuSet& cpus) {
    if (cpus == p.shared) return ref(shared);
    if (cpus == p.reclaimed) return ref(reclaimed);
    if (cpus == p.reserved) return ref(reserved);
    return str(cpus.ToString());
  };
  Value pods(rapidjson::kObjectType);
  for (const auto& [uid, containers] : state.pods()) {
    Value pod(rapidjson::kObjectType);
    for (const auto& [name, c] : containers) {
      Value e(rapidjson::kObjectType);
      e.AddMember("pod_namespace", ref(c.pod_namespace), a);
      e.AddMember("pod_name", ref(c.pod_name), a);
      e.AddMember("qos_level", ref(qos::QosLevelName(c.level)), a);
      e.AddMember("request_milli", Value(static_cast<int64_t>(c.request_milli)), a);
      e.AddMember("cpuset", cpuset_text(ContainerCpus(layout, p, c)), a);
      if (!c.role.empty()) e.AddMember("role", ref(c.role), a);
      if (c.numa_binding) e.AddMember("numa_binding", Value(true), a);
      if (c.numa_exclusive) e.AddMember("numa_exclusive", Value(true), a);
      if (!c.numa_nodes.empty()) e.AddMember("numa_nodes", str(c.numa_nodes.ToString()), a);
      pod.AddMember(ref(name), e, a);
    }
    pods.AddMember(ref(uid), pod, a);
  }

  Value pools(rapidjson::kObjectType);
  if (state.reclaimed_size == kReclaimedAuto) {
    pools.AddMember("reclaimed_size", Value(rapidjson::StringRef("auto")), a);
  } else {
    pools.AddMember("reclaimed_size", Value(state.reclaimed_size), a);
  }

  Value machine(rapidjson::kObjectType);
  machine.AddMember("cpus", str(layout.online().ToString()), a);
  Value nodes(rapidjson::kObjectType);
  for (const auto& [node, list] : LayoutNodes(layout)) nodes.AddMember(str(node), str(list), a);
  machine.AddMember("nodes", nodes, a);

  doc.AddMember("pod_entries", pods, a);
  doc.AddMember("pools", pools, a);
  doc.AddMember("machine", machine, a);
  return doc;
}

StatusOr<CpuState> DecodeState(const rapidjson::Value& data, const CpuLayout& layout,
                               const std::string& path) {
  return Decoder(layout, path).Decode(data);
}

}  // namespace qrm::cpu
