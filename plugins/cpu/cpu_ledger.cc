#include "plugins/cpu/cpu_ledger.h"

#include <charconv>
#include <filesystem>

#include <fmt/format.h>

#include "checkpoint/state_file.h"
#include "common/log.h"
#include "common/quote.h"
#include "plugins/cpu/state_checkpoint.h"

namespace qrm::cpu {
namespace {

constexpr const char* kMachineSetting = "machine";
constexpr const char* kReclaimedSizeSetting = "reclaimed_size";
constexpr const char* kSharedSizeSetting = "shared_size";

// "cpus 0-79, nodes 0:0-39 1:40-79": what a ledger must have been written on.
std::string LayoutText(const CpuLayout& layout) {
  std::string text =
      "cpus " + (layout.online().Empty() ? "none" : layout.online().ToString()) + ", nodes";
  for (const auto& [node, cpus] : layout.node_cpus()) {
    text += fmt::format(" {}:{}", node, cpus.Empty() ? "-" : cpus.ToString());
  }
  return text;
}

std::string ReclaimedSizeSetting(int size) {
  return size == kReclaimedAuto ? "auto" : std::to_string(size);
}

StatusOr<int> ParseSharedSize(const std::string& text) {
  int size = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), size);
  if (ec != std::errc() || end != text.data() + text.size() || size < 0) {
    return DataLossError(fmt::format("setting shared_size {}: not a whole number", Quote(text)));
  }
  return size;
}

StatusOr<int> ParseReclaimedSize(const std::string& text) {
  if (text == "auto") return kReclaimedAuto;
  int size = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), size);
  if (ec != std::errc() || end != text.data() + text.size() || size < 0) {
    return DataLossError(
        fmt::format("setting reclaimed_size {}: not \"auto\" or a whole number", Quote(text)));
  }
  return size;
}

// What the entries claim must fit this machine: dedicated CPUs online, not reserved, held once.
Status CheckEntries(const CpuState::Pods& pods, const CpuLayout& layout, const CpuSet& reserved,
                    const std::string& path) {
  CpuSet dedicated;
  for (const auto& [uid, containers] : pods) {
    for (const auto& [name, c] : containers) {
      if (!c.dedicated()) continue;
      const std::string where = fmt::format("pod {} container {}", Quote(uid), Quote(name));
      if (c.cpuset.Empty() || !c.cpuset.IsSubsetOf(layout.online())) {
        return DataLossError(
            fmt::format("{}: dedicated cpuset {} is empty or not on this machine ({})", where,
                        c.cpuset.ToString(), layout.online().ToString()));
      }
      if (c.cpuset.Overlaps(dedicated)) {
        return DataLossError(fmt::format("{}: dedicated CPUs {} are also held by another container",
                                         where, c.cpuset.Intersection(dedicated).ToString()));
      }
      if (c.cpuset.Overlaps(reserved)) {
        // --reserved-cpus changed while containers held them.
        return FailedPreconditionError(fmt::format(
            "state file {}: {} holds dedicated CPUs {} that are now reserved ({}); restore the "
            "previous reserved CPUs, or drain the node and start once with --reset-state",
            path, PodRef{uid, c.pod_namespace, c.pod_name, name},
            c.cpuset.Intersection(reserved).ToString(), reserved.ToString()));
      }
      dedicated = dedicated.Union(c.cpuset);
    }
  }
  return Status::Ok();
}

// A version 1 file (state_checkpoint.h) as a ledger, each container with the CPUs it runs on.
StatusOr<sdk::PodLedger<ContainerAllocation, ContainerCodec>::Contents> UpgradeVersion1(
    const rapidjson::Value& data, const CpuLayout& layout, const CpuSet& reserved,
    const std::string& path) {
  QRM_ASSIGN_OR_RETURN(CpuState state, DecodeState(data, layout, path));
  sdk::PodLedger<ContainerAllocation, ContainerCodec>::Contents contents;
  // When the pools cannot be computed (dedicated CPUs now reserved: the check that follows
  // refuses the ledger with the way out), pool containers are recorded without CPUs; theirs
  // are recomputed at every start anyway.
  (void)RefreshPools(layout, reserved, &state);
  for (const auto& [uid, containers] : state.pods()) {
    for (const auto& [name, c] : containers) {
      contents.pods[uid][name] = WithCpus(layout, state.pools, c);
    }
  }
  contents.settings[kMachineSetting] = LayoutText(layout);
  contents.settings[kReclaimedSizeSetting] = ReclaimedSizeSetting(state.reclaimed_size);
  Logger("cpu-plugin")
      ->info("state file {}: upgrading version 1 ({} pods) to {}", path, contents.pods.size(),
             kLedgerVersion);
  return contents;
}

Status SetAsideForReset(const std::string& path) {
  for (const std::string& file : {path, path + ".journal"}) {
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) continue;
    QRM_ASSIGN_OR_RETURN(const std::string aside, checkpoint::SetStateFileAside(file, "reset"));
    Logger("cpu-plugin")
        ->warn("--reset-state: moved {} to {}, starting with no containers", file, aside);
  }
  return Status::Ok();
}

}  // namespace

void ContainerCodec::Encode(const ContainerAllocation& c, sdk::EntryWriter& w) {
  w.Set("pod_namespace", c.pod_namespace);
  w.Set("pod_name", c.pod_name);
  w.Set("qos_level", qos::QosLevelName(c.level));
  w.Set("request_milli", c.request_milli);
  w.Set("cpuset", c.cpuset.ToString());
  // Optional keys only when set: most containers are pool containers without them.
  if (!c.role.empty()) w.Set("role", c.role);
  if (c.numa_binding) w.Set("numa_binding", true);
  if (c.numa_exclusive) w.Set("numa_exclusive", true);
  if (!c.numa_nodes.empty()) w.Set("numa_nodes", c.numa_nodes.ToString());
}

StatusOr<ContainerAllocation> ContainerCodec::Decode(const sdk::EntryReader& r) {
  ContainerAllocation c;
  QRM_ASSIGN_OR_RETURN(c.pod_namespace, r.String("pod_namespace"));
  QRM_ASSIGN_OR_RETURN(c.pod_name, r.String("pod_name"));
  QRM_ASSIGN_OR_RETURN(const std::string level, r.String("qos_level"));
  auto parsed_level = qos::ParseQosLevel(level);
  if (!parsed_level.ok()) return DataLossError(fmt::format("unknown qos_level {}", Quote(level)));
  c.level = *parsed_level;
  QRM_ASSIGN_OR_RETURN(c.request_milli, r.Int("request_milli"));
  if (c.request_milli < 0) {
    return DataLossError(fmt::format("request_milli {} is negative", c.request_milli));
  }
  QRM_ASSIGN_OR_RETURN(const std::string cpuset, r.String("cpuset"));
  auto cpus = CpuSet::Parse(cpuset);
  if (!cpus.ok()) return DataLossError("cpuset: " + cpus.status().message());
  c.cpuset = *cpus;
  QRM_ASSIGN_OR_RETURN(c.role, r.StringOr("role", ""));
  QRM_ASSIGN_OR_RETURN(c.numa_binding, r.BoolOr("numa_binding", false));
  QRM_ASSIGN_OR_RETURN(c.numa_exclusive, r.BoolOr("numa_exclusive", false));
  QRM_ASSIGN_OR_RETURN(const std::string nodes, r.StringOr("numa_nodes", ""));
  if (!nodes.empty()) {
    auto mask = NumaMask::Parse(nodes);
    if (!mask.ok()) return DataLossError("numa_nodes: " + mask.status().message());
    c.numa_nodes = *mask;
  }
  if (c.numa_bound() && c.numa_nodes.empty()) {
    return DataLossError("NUMA-bound but numa_nodes is empty");
  }
  return c;
}

StatusOr<std::unique_ptr<CpuLedger>> CpuLedger::Open(const CpuLedgerOptions& options,
                                                     const CpuLayout& layout,
                                                     const CpuSet& reserved, CpuState* state) {
  *state = CpuState{};
  const std::string& path = options.path;
  if (!path.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    if (ec) return ErrnoError(ec.value(), "create state directory", path);
    if (options.reset_state) QRM_RETURN_IF_ERROR(SetAsideForReset(path));
  }

  sdk::LedgerOptions lo;
  lo.path = path;
  lo.component = "cpu-plugin";
  lo.version = kLedgerVersion;
  lo.oldest_version = 1;
  lo.snapshot_write = options.snapshot_write;
  lo.journal_write = options.journal_write;
  lo.snapshot_view = [&layout, pools = options.pools](rapidjson::Value& data,
                                                      rapidjson::Document::AllocatorType& a) {
    if (pools) AddMachineState(layout, pools(), data, a);
  };
  const auto check = [&](const Ledger::Contents& contents) -> Status {
    const auto machine = contents.settings.find(kMachineSetting);
    const std::string here = LayoutText(layout);
    if (machine == contents.settings.end() || machine->second != here) {
      return OtherCpuLayoutError(
          path, machine == contents.settings.end() ? "unknown" : machine->second, here);
    }
    QRM_RETURN_IF_ERROR(CheckEntries(contents.pods, layout, reserved, path));
    CpuState restored(contents.pods);
    const auto size = contents.settings.find(kReclaimedSizeSetting);
    if (size != contents.settings.end()) {
      QRM_ASSIGN_OR_RETURN(restored.reclaimed_size, ParseReclaimedSize(size->second));
    }
    const auto shared = contents.settings.find(kSharedSizeSetting);
    if (shared != contents.settings.end()) {
      QRM_ASSIGN_OR_RETURN(restored.shared_size, ParseSharedSize(shared->second));
    }
    *state = std::move(restored);
    return Status::Ok();
  };
  const auto upgrade = [&](const rapidjson::Value& data, uint32_t) {
    return UpgradeVersion1(data, layout, reserved, path);
  };
  QRM_ASSIGN_OR_RETURN(auto opened, Ledger::Open(lo, check, upgrade));
  if (!opened.load.restored) {
    // A first start, or a ledger set aside: record the machine it describes from now on.
    QRM_RETURN_IF_ERROR(opened.ledger->Set(kMachineSetting, LayoutText(layout)));
  }
  return std::unique_ptr<CpuLedger>(new CpuLedger(std::move(opened.ledger)));
}

Status CpuLedger::Put(const std::string& pod_uid, const std::string& container,
                      const ContainerAllocation& c) {
  return ledger_->Put(pod_uid, container, c);
}

Status CpuLedger::RemovePod(const std::string& pod_uid) {
  return ledger_->RemovePod(pod_uid);
}

Status CpuLedger::SetPoolSetting(int reclaimed_size, int shared_size) {
  // shared_size, when set, wins over reclaimed_size: it is written first when it is being set
  // and last when it is being cleared.
  const auto reclaimed = [&] {
    return ledger_->Set(kReclaimedSizeSetting, ReclaimedSizeSetting(reclaimed_size));
  };
  const auto shared = [&] { return ledger_->Set(kSharedSizeSetting, std::to_string(shared_size)); };
  if (shared_size > 0) {
    QRM_RETURN_IF_ERROR(shared());
    return reclaimed();
  }
  QRM_RETURN_IF_ERROR(reclaimed());
  return shared();
}

Status CpuLedger::WriteSnapshot() {
  return ledger_->WriteSnapshot();
}

Status OtherCpuLayoutError(const std::string& path, const std::string& stored,
                           const std::string& here) {
  return FailedPreconditionError(fmt::format(
      "state file {} was written on a machine with a different CPU layout ({}; this machine: "
      "{}), so its CPU assignments cannot be trusted. Drain the node (evict every pod using "
      "qrm), then delete {} or start the plugin once with --reset-state",
      path, stored, here, path));
}

void AddMachineState(const CpuLayout& layout, const CpuPools& p, rapidjson::Value& data,
                     rapidjson::Document::AllocatorType& a) {
  const auto str = [&a](const std::string& s) {
    return rapidjson::Value(s.c_str(), static_cast<rapidjson::SizeType>(s.size()), a);
  };
  rapidjson::Value machine_state(rapidjson::kObjectType);
  for (const auto& [node, cpus] : layout.node_cpus()) {
    rapidjson::Value n(rapidjson::kObjectType);
    n.AddMember("reserved_cpuset", str(p.reserved.Intersection(cpus).ToString()), a);
    n.AddMember("allocated_cpuset", str(p.dedicated.Intersection(cpus).ToString()), a);
    n.AddMember("default_cpuset", str(p.shared.Union(p.reclaimed).Intersection(cpus).ToString()),
                a);
    n.AddMember("shared_cpuset", str(p.shared.Intersection(cpus).ToString()), a);
    n.AddMember("reclaimed_cpuset", str(p.reclaimed.Intersection(cpus).ToString()), a);
    machine_state.AddMember(str(std::to_string(node)), n, a);
  }
  data.RemoveMember("machineState");
  data.AddMember("machineState", machine_state, a);
}

}  // namespace qrm::cpu
