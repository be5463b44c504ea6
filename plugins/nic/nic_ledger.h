// The NIC plugin's durable state: an SDK PodLedger (plugins/sdk/pod_ledger.h) at
// config.StatePath() (<state-dir>/nic_plugin_state), with its journal beside it
// (nic_plugin_state.journal).
//
// Version 2. One entry per container, everything it was told about its NIC, so that answers
// stay the same across restarts even if the NIC's addresses change or it disappears (the
// netns keys and addresses only when set, hint_preferred only when true):
//   {"pod_namespace": "default", "pod_name": "pod1", "interface_name": "eth1",
//    "netns_name": "ns1", "netns": "/var/run/netns/ns1", "numa_node": 1,
//    "bandwidth_mbps": 2000, "ipv4": "10.0.1.10", "ipv6": "fd00:1::10", "hint_preferred": true}
// No settings: the NICs served are discovered at every start, and an entry whose NIC is gone
// or moved is kept and logged, not refused. Each snapshot also carries "machineState", the
// design document's per-node view of the NICs served (nic_checkpoint.h) for operators: never
// read back, and current as of the snapshot (start, clean stop, every compaction).
//
// Version 1 files (the whole state rewritten on every change, nic_checkpoint.h) are read once
// and upgraded.
#pragma once

#include <memory>
#include <string>

#include "checkpoint/checkpoint_file.h"
#include "checkpoint/journal.h"
#include "checkpoint/state_file.h"
#include "common/status.h"
#include "plugins/nic/nic_state.h"
#include "plugins/sdk/pod_ledger.h"

namespace qrm::nic {

inline constexpr uint32_t kLedgerVersion = 2;

// One ledger entry: a container's NIC and the pod it belongs to.
struct NicEntry {
  std::string pod_name;
  std::string pod_namespace;
  NicAssignment assignment;

  void Encode(sdk::EntryWriter& w) const;
  static StatusOr<NicEntry> Decode(const sdk::EntryReader& r);
};

using NicLedger = sdk::PodLedger<NicEntry>;

// `options` carries the path (empty: nothing on disk), reset_state and the write options; the
// component, versions and snapshot view are set here. Restores what the files hold into
// `state`, which must be fresh (the NICs served only); on error `state` is unchanged. Entries whose
// NIC is gone, moved or now smaller are kept and logged (RecordDiscrepancies). A corrupt ledger is
// set aside and the plugin starts empty (checkpoint/state_file.h). `state` must outlive the ledger:
// snapshots describe it.
StatusOr<std::unique_ptr<NicLedger>> OpenNicLedger(sdk::LedgerOptions options, NicState* state,
                                                   checkpoint::StateFileLoad* load);

}  // namespace qrm::nic
