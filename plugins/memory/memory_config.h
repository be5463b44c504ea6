// Configuration of the memory plugin: what the operator sets (flags or the JSON config file),
// already parsed and checked, so the plugin itself never sees text.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "checkpoint/checkpoint_file.h"
#include "checkpoint/journal.h"
#include "common/status.h"
#include "qos/qos_requirement.h"

namespace qrm::memory {

inline constexpr const char* kResourceName = "memory";
// The ledger's snapshot inside --state-dir (memory_ledger.h; the journal is beside it).
inline constexpr const char* kStateFileName = "memory_plugin_state";
inline constexpr const char* kDefaultStateDir = "/var/lib/qrm/memory-plugin";
// The kubelet's default --reserved-memory per NUMA node (500Mi), also the design document's.
inline constexpr uint64_t kDefaultReservedBytes = 524288000;

// Memory kept back from allocation on each NUMA node (for the kernel and system daemons).
struct ReservedMemory {
  uint64_t default_bytes = kDefaultReservedBytes;  // for every node not listed below
  std::map<int, uint64_t> per_node;                // node id -> bytes

  uint64_t For(int node) const;
};

// Parses --reserved-memory. Accepted forms (elements separated by ','):
//   "500Mi"            every node
//   "0=500Mi,1=1Gi"    per node; unlisted nodes keep the default (500Mi)
//   "1Gi,1=2Gi"        a bare element sets the default for unlisted nodes
// Sizes are what qrm::config::ParseBytes accepts ("524288000", "500Mi", "1Gi").
// kInvalidArgument naming reserved-memory and the offending element: an unparsable size or
// node id, a node listed twice, two bare defaults.
StatusOr<ReservedMemory> ParseReservedMemory(std::string_view text);

struct MemoryPluginConfig {
  ReservedMemory reserved;
  qos::RoleTable roles;
  // Directory of the state files; empty keeps state in memory only (unit tests only: a
  // real plugin must survive its own restart).
  std::string state_dir;
  // Discard an existing state file that cannot be restored (corrupt, or written on a machine
  // with other NUMA nodes): it is renamed to <file>.reset-<unix time> and the plugin starts
  // empty. Without it such a checkpoint stops the plugin with an error saying so.
  bool reset_state = false;
  // How the ledger's snapshots and journal are written (tests inject faults here).
  checkpoint::WriteOptions write_options;
  checkpoint::JournalOptions journal_options;

  std::string StatePath() const;  // "" when state_dir is empty
};

}  // namespace qrm::memory
