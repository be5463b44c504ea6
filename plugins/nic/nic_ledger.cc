#include "plugins/nic/nic_ledger.h"

#include <fmt/format.h>

#include "common/log.h"
#include "common/numa_mask.h"
#include "plugins/nic/nic_checkpoint.h"

namespace qrm::nic {
namespace {

constexpr const char* kComponent = "nic-plugin";

using Contents = sdk::PodLedger<NicEntry>::Contents;

// Records every entry in a copy of `fresh`, logging what the NICs served now contradict.
NicState RestoreEntries(const Contents& contents, const NicState& fresh, const std::string& path) {
  NicState state = fresh;
  for (const auto& [uid, containers] : contents.pods) {
    for (const auto& [name, entry] : containers) {
      state.AddRecorded(uid, entry.pod_name, entry.pod_namespace, name, entry.assignment);
    }
  }
  for (const std::string& line : RecordDiscrepancies(state)) {
    Logger(kComponent)->warn("state file {}: {}", path, line);
  }
  return state;
}

// A version 1 file (nic_checkpoint.h) as a ledger.
StatusOr<Contents> UpgradeVersion1(const rapidjson::Value& data, const NicState& fresh,
                                   const std::string& path) {
  NicState state = fresh;
  std::vector<std::string> discrepancies;  // logged once, when the upgraded ledger is restored
  QRM_RETURN_IF_ERROR(RestoreCheckpoint(data, state, &discrepancies));
  Contents contents;
  for (const auto& [uid, pod] : state.pods()) {
    for (const auto& [name, assignment] : pod.containers) {
      contents.pods[uid][name] = NicEntry{pod.name, pod.ns, assignment};
    }
  }
  Logger(kComponent)
      ->info("state file {}: upgrading version 1 ({} pods) to {}", path, contents.pods.size(),
             kLedgerVersion);
  return contents;
}

}  // namespace

void NicEntry::Encode(sdk::EntryWriter& w) const {
  const NicAssignment& a = assignment;
  w.Set("pod_namespace", pod_namespace);
  w.Set("pod_name", pod_name);
  w.Set("interface_name", a.nic.name);
  if (!a.nic.netns.empty()) w.Set("netns_name", a.nic.netns);
  if (!a.netns_path.empty()) w.Set("netns", a.netns_path);
  w.Set("numa_node", a.numa_node);
  w.Set("bandwidth_mbps", a.bandwidth_mbps);
  if (!a.ipv4.empty()) w.Set("ipv4", a.ipv4);
  if (!a.ipv6.empty()) w.Set("ipv6", a.ipv6);
  if (a.hint_preferred) w.Set("hint_preferred", true);
}

StatusOr<NicEntry> NicEntry::Decode(const sdk::EntryReader& r) {
  NicEntry e;
  NicAssignment& a = e.assignment;
  QRM_ASSIGN_OR_RETURN(e.pod_namespace, r.String("pod_namespace"));
  QRM_ASSIGN_OR_RETURN(e.pod_name, r.String("pod_name"));
  QRM_ASSIGN_OR_RETURN(a.nic.name, r.String("interface_name"));
  if (a.nic.name.empty()) return DataLossError("interface_name is empty");
  QRM_ASSIGN_OR_RETURN(a.nic.netns, r.StringOr("netns_name", ""));
  QRM_ASSIGN_OR_RETURN(a.netns_path, r.StringOr("netns", ""));
  QRM_ASSIGN_OR_RETURN(const int64_t node, r.Int("numa_node"));
  if (node < -1 || node >= NumaMask::kMaxNodes) {
    return DataLossError(fmt::format("numa_node {}: not -1 or a NUMA node id", node));
  }
  a.numa_node = static_cast<int>(node);
  QRM_ASSIGN_OR_RETURN(a.bandwidth_mbps, r.Int("bandwidth_mbps"));
  if (a.bandwidth_mbps < 0) {
    return DataLossError(
        fmt::format("bandwidth_mbps {}: not a number of Mb/s >= 0", a.bandwidth_mbps));
  }
  QRM_ASSIGN_OR_RETURN(a.ipv4, r.StringOr("ipv4", ""));
  QRM_ASSIGN_OR_RETURN(a.ipv6, r.StringOr("ipv6", ""));
  QRM_ASSIGN_OR_RETURN(a.hint_preferred, r.BoolOr("hint_preferred", false));
  return e;
}

StatusOr<std::unique_ptr<NicLedger>> OpenNicLedger(sdk::LedgerOptions options, NicState* state,
                                                   checkpoint::StateFileLoad* load) {
  *load = {};
  const std::string& path = options.path;
  const NicState fresh = *state;
  options.component = kComponent;
  options.version = kLedgerVersion;
  options.oldest_version = 1;
  options.snapshot_view = [state](rapidjson::Value& data, rapidjson::Document::AllocatorType& a) {
    AddMachineState(*state, data, a);
  };
  const auto check = [&](const Contents& contents) -> Status {
    *state = RestoreEntries(contents, fresh, path);
    return Status::Ok();
  };
  const auto upgrade = [&](const rapidjson::Value& data, uint32_t) {
    return UpgradeVersion1(data, fresh, path);
  };
  QRM_ASSIGN_OR_RETURN(auto opened, NicLedger::Open(options, check, upgrade));
  *load = opened.load;
  if (!opened.load.restored) *state = fresh;
  if (load->restored) {
    Logger(kComponent)->info("restored {} pod(s) from {}", state->pods().size(), path);
  }
  return std::move(opened.ledger);
}

}  // namespace qrm::nic
