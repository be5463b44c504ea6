#include "plugins/memory/memory_ledger.h"

#include <charconv>

#include <fmt/format.h>

#include "common/log.h"
#include "common/quote.h"
#include "plugins/memory/memory_checkpoint.h"

namespace qrm::memory {
namespace {

constexpr const char* kComponent = "memory-plugin";
constexpr const char* kNodesSetting = "numa_nodes";
constexpr const char* kTotalsSetting = "node_total_bytes";

StatusOr<uint64_t> ParseBytes(std::string_view text, std::string_view what) {
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return DataLossError(fmt::format("{} {}: not a decimal number of bytes", what, Quote(text)));
  }
  return n;
}

// "0=536870912,1=536870912" <-> {0: 536870912, 1: 536870912}.
std::string FormatNodeBytes(const std::map<int, uint64_t>& by_node) {
  std::string text;
  for (const auto& [node, bytes] : by_node) {
    text += fmt::format("{}{}={}", text.empty() ? "" : ",", node, bytes);
  }
  return text;
}

StatusOr<std::map<int, uint64_t>> ParseNodeBytes(std::string_view text, std::string_view what) {
  std::map<int, uint64_t> by_node;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    const size_t eq = item.find('=');
    const auto malformed = [&] {
      return DataLossError(
          fmt::format("{} item {}: not <NUMA node>=<bytes> of a new node", what, Quote(item)));
    };
    if (eq == std::string_view::npos) return malformed();
    int node = -1;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + eq, node);
    if (ec != std::errc() || end != item.data() + eq || node < 0 || by_node.contains(node)) {
      return malformed();
    }
    QRM_ASSIGN_OR_RETURN(by_node[node], ParseBytes(item.substr(eq + 1), what));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  return by_node;
}

std::string NodeTotals(const MemoryState& state) {
  std::map<int, uint64_t> totals;
  for (const NodeMemory& node : state.nodes()) totals[node.id] = node.total_bytes;
  return FormatNodeBytes(totals);
}

using Contents = sdk::PodLedger<MemoryEntry>::Contents;

// The machine a ledger was written on against this one: other nodes are refused, other totals
// logged.
Status CheckMachine(const Contents& contents, const MemoryState& state, const std::string& path) {
  const auto nodes = contents.settings.find(kNodesSetting);
  const std::string here = state.NodeMask().ToString();
  if (nodes == contents.settings.end() || nodes->second != here) {
    return FailedPreconditionError(fmt::format(
        "state file {} was written on a machine with NUMA nodes {}, this machine has \"{}\"; "
        "drain the node (evict every pod using qrm), then delete {} or start the plugin once "
        "with --reset-state",
        path, nodes == contents.settings.end() ? "unknown" : Quote(nodes->second), here, path));
  }
  const auto totals = contents.settings.find(kTotalsSetting);
  if (totals != contents.settings.end() && totals->second != NodeTotals(state)) {
    Logger(kComponent)
        ->warn(
            "state file {}: NUMA node totals were {} bytes when written, are {} now; the "
            "recorded allocations must still fit",
            path, totals->second, NodeTotals(state));
  }
  return Status::Ok();
}

// Adds every entry to a copy of `fresh`; kDataLoss for an inconsistent entry,
// kResourceExhausted (with the way out) for one that no longer fits.
StatusOr<MemoryState> RestoreEntries(const Contents& contents, const MemoryState& fresh) {
  MemoryState state = fresh;
  for (const auto& [uid, containers] : contents.pods) {
    for (const auto& [name, entry] : containers) {
      Status added = state.Add(uid, entry.pod_name, entry.pod_namespace, name, entry.memory);
      const std::string where = fmt::format("pod {} container {}", Quote(uid), Quote(name));
      if (added.code() == StatusCode::kInvalidArgument) {
        return DataLossError(fmt::format("{}: {}", where, added.message()));
      }
      if (!added.ok()) {
        return added.WithContext(where +
                                 " (a larger --reserved-memory? restore it, or drain "
                                 "the node and start once with --reset-state)");
      }
    }
  }
  return state;
}

// A version 1 file (memory_checkpoint.h) as a ledger.
StatusOr<Contents> UpgradeVersion1(const rapidjson::Value& data, const MemoryState& fresh,
                                   const std::string& path) {
  MemoryState state = fresh;
  std::vector<std::string> warnings;
  QRM_RETURN_IF_ERROR(RestoreCheckpoint(data, state, &warnings));
  for (const std::string& w : warnings) Logger(kComponent)->warn("state file {}: {}", path, w);
  Contents contents;
  for (const auto& [uid, pod] : state.pods()) {
    for (const auto& [name, memory] : pod.containers) {
      contents.pods[uid][name] = MemoryEntry{pod.name, pod.ns, memory};
    }
  }
  contents.settings[kNodesSetting] = state.NodeMask().ToString();
  contents.settings[kTotalsSetting] = NodeTotals(state);
  Logger(kComponent)
      ->info("state file {}: upgrading version 1 ({} pods) to {}", path, contents.pods.size(),
             kLedgerVersion);
  return contents;
}

}  // namespace

void MemoryEntry::Encode(sdk::EntryWriter& w) const {
  w.Set("pod_namespace", pod_namespace);
  w.Set("pod_name", pod_name);
  w.Set("quantity", std::to_string(memory.bytes));
  // Optional keys only when set: most containers are not NUMA-bound.
  if (memory.numa_bound()) {
    w.Set("numa_nodes", memory.nodes.ToString());
    w.Set("node_bytes", FormatNodeBytes(memory.bytes_by_node));
  }
  if (memory.hint_preferred) w.Set("hint_preferred", true);
  if (!memory.role.empty()) w.Set("role", memory.role);
  if (memory.numa_exclusive) w.Set("numa_exclusive", true);
}

StatusOr<MemoryEntry> MemoryEntry::Decode(const sdk::EntryReader& r) {
  MemoryEntry e;
  QRM_ASSIGN_OR_RETURN(e.pod_namespace, r.String("pod_namespace"));
  QRM_ASSIGN_OR_RETURN(e.pod_name, r.String("pod_name"));
  QRM_ASSIGN_OR_RETURN(const std::string quantity, r.String("quantity"));
  QRM_ASSIGN_OR_RETURN(e.memory.bytes, ParseBytes(quantity, "quantity"));
  QRM_ASSIGN_OR_RETURN(const std::string nodes, r.StringOr("numa_nodes", ""));
  auto mask = NumaMask::Parse(nodes);
  if (!mask.ok()) return DataLossError("numa_nodes: " + mask.status().message());
  e.memory.nodes = *mask;
  QRM_ASSIGN_OR_RETURN(const std::string node_bytes, r.StringOr("node_bytes", ""));
  QRM_ASSIGN_OR_RETURN(e.memory.bytes_by_node, ParseNodeBytes(node_bytes, "node_bytes"));
  QRM_ASSIGN_OR_RETURN(e.memory.hint_preferred, r.BoolOr("hint_preferred", false));
  QRM_ASSIGN_OR_RETURN(e.memory.role, r.StringOr("role", ""));
  QRM_ASSIGN_OR_RETURN(e.memory.numa_exclusive, r.BoolOr("numa_exclusive", false));
  return e;
}

StatusOr<std::unique_ptr<MemoryLedger>> OpenMemoryLedger(sdk::LedgerOptions options,
                                                         MemoryState* state,
                                                         checkpoint::StateFileLoad* load) {
  *load = {};
  const std::string& path = options.path;
  const MemoryState fresh = *state;
  options.component = kComponent;
  options.version = kLedgerVersion;
  options.oldest_version = 1;
  options.snapshot_view = [state](rapidjson::Value& data, rapidjson::Document::AllocatorType& a) {
    AddMachineState(*state, data, a);
  };
  const auto check = [&](const Contents& contents) -> Status {
    QRM_RETURN_IF_ERROR(CheckMachine(contents, fresh, path));
    QRM_ASSIGN_OR_RETURN(*state, RestoreEntries(contents, fresh));
    return Status::Ok();
  };
  const auto upgrade = [&](const rapidjson::Value& data, uint32_t) {
    return UpgradeVersion1(data, fresh, path);
  };
  QRM_ASSIGN_OR_RETURN(auto opened, MemoryLedger::Open(options, check, upgrade));
  *load = opened.load;
  if (!opened.load.restored) *state = fresh;  // a check that refused may have run partly
  // Record the machine the ledger describes from now on (no record when unchanged).
  QRM_RETURN_IF_ERROR(opened.ledger->Set(kNodesSetting, fresh.NodeMask().ToString()));
  QRM_RETURN_IF_ERROR(opened.ledger->Set(kTotalsSetting, NodeTotals(fresh)));
  if (load->restored) {
    Logger(kComponent)->info("restored {} pod(s) from {}", state->pods().size(), path);
  }
  return std::move(opened.ledger);
}

}  // namespace qrm::memory
