// The memory plugin's durable state: an SDK PodLedger (plugins/sdk/pod_ledger.h) at
// config.StatePath() (<state-dir>/memory_plugin_state), with its journal beside it
// (memory_plugin_state.journal).
//
// Version 2. One entry per container (byte counts are decimal strings, exact in every JSON
// reader; the last five keys only when set):
//   {"pod_namespace": "default", "pod_name": "pod1", "quantity": "1073741824",
//    "numa_nodes": "0-1", "node_bytes": "0=536870912,1=536870912",
//    "hint_preferred": true, "role": "storage-service", "numa_exclusive": true}
// Settings: "numa_nodes", the NUMA nodes of the machine the ledger was written on ("0-1"; a
// ledger of other nodes is refused), and "node_total_bytes" ("0=237706936320,1=..."; other
// totals with the same nodes are a warning: firmware may take a few pages after a reboot).
// Each snapshot also carries "machineState", the design document's per-node view (Allocated,
// allocatable, free, pod_entries, systemReserved, total) for operators: never read back, and
// current as of the snapshot (start, clean stop, every compaction).
//
// Version 1 files (the whole state rewritten on every change, memory_checkpoint.h) are read
// once and upgraded.
#pragma once

#include <memory>
#include <string>

#include "checkpoint/checkpoint_file.h"
#include "checkpoint/journal.h"
#include "checkpoint/state_file.h"
#include "common/status.h"
#include "plugins/memory/memory_state.h"
#include "plugins/sdk/pod_ledger.h"

namespace qrm::memory {

inline constexpr uint32_t kLedgerVersion = 2;

// One ledger entry: a container's memory and the pod it belongs to.
struct MemoryEntry {
  std::string pod_name;
  std::string pod_namespace;
  ContainerMemory memory;

  void Encode(sdk::EntryWriter& w) const;
  static StatusOr<MemoryEntry> Decode(const sdk::EntryReader& r);
};

using MemoryLedger = sdk::PodLedger<MemoryEntry>;

// `options` carries the path (empty: nothing on disk), reset_state and the write options; the
// component, versions and snapshot view are set here. Restores what the files hold into
// `state`, which must be fresh (the machine and the reservations only); on error `state` is
// unchanged. Refuses, naming the way out (--reset-state) unless options.reset_state: a ledger
// of other NUMA nodes
// (kFailedPrecondition) and allocations that no longer fit (kResourceExhausted, e.g. a larger
// reservation). A corrupt ledger is set aside and the plugin starts empty
// (checkpoint/state_file.h). `state` must outlive the ledger: snapshots describe it.
StatusOr<std::unique_ptr<MemoryLedger>> OpenMemoryLedger(sdk::LedgerOptions options,
                                                         MemoryState* state,
                                                         checkpoint::StateFileLoad* load);

}  // namespace qrm::memory
