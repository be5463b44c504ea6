// Configuration of the NIC plugin, already parsed and checked.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/checkpoint_file.h"
#include "checkpoint/journal.h"
#include "common/protocol_keys.h"
#include "common/status.h"
#include "qos/qos_requirement.h"

namespace qrm::nic {

// The ledger's snapshot inside --state-dir (nic_ledger.h; the journal is beside it).
inline constexpr const char* kStateFileName = "nic_plugin_state";
inline constexpr const char* kDefaultStateDir = "/var/lib/qrm/nic-plugin";

// A bandwidth request above this (1 Pb/s) is nonsense, not a big pod.
inline constexpr double kMaxBandwidthMbps = 1e9;

struct NicPluginConfig {
  std::string resource_name = kNicResourceName;
  // Mb/s requested in resource_requests[bandwidth_resource_name]; "" turns bandwidth
  // accounting off (such requests are then ignored).
  std::string bandwidth_resource_name = kNicBandwidthResourceName;
  // A NIC's bandwidth capacity is speed_mbps * bandwidth_ratio (rounded down).
  double bandwidth_ratio = 1.0;
  // Entries "eth0" (that name in any namespace) or "ns1/eth1" (in namespace ns1); empty
  // serves every NIC discovery lists.
  std::vector<std::string> allowlist;
  qos::RoleTable roles;
  // Directory of the state files (nic_ledger.h); empty keeps state in memory only (unit
  // tests only).
  std::string state_dir;
  // Set aside a state file that cannot be restored and start empty (see memory plugin).
  bool reset_state = false;
  // How the ledger's snapshots and journal are written (tests inject faults here).
  checkpoint::WriteOptions write_options;
  checkpoint::JournalOptions journal_options;

  std::string StatePath() const;  // "" when state_dir is empty
  // kInvalidArgument naming the option and value: an empty resource name, a bandwidth
  // resource equal to the NIC resource, a ratio that is not a finite number in (0, 100].
  Status Validate() const;
};

// Parses --nic-allowlist ("eth0,ns1/eth1"; "" is no allowlist). kInvalidArgument naming
// nic-allowlist and the element for an empty element or one with more than one '/'.
StatusOr<std::vector<std::string>> ParseNicAllowlist(std::string_view text);

}  // namespace qrm::nic
