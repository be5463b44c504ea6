// Version 1 of the memory plugin's state file (<state-dir>/memory_plugin_state), which rewrote
// the whole state on every change. The plugin now keeps a ledger (memory_ledger.h, version 2)
// and reads this format only to upgrade a file an older plugin wrote; its per-node view
// ("machineState") is also each ledger snapshot's. The `data`, in the design document's shape
// plus the machine layout it was written on:
//
//   {"machineState": {"memory": {
//      "0": {"Allocated": "0", "allocatable": "237182648320", "free": "237182648320",
//            "pod_entries": {"<pod uid>": {"<container>": "<bytes on this node>"}},
//            "systemReserved": "524288000", "total": "237706936320"}, ...}},
//    "pod_resource_entries": {"<pod uid>": {"<container>": {
//        "pod_name": "pod1", "pod_namespace": "default", "quantity": "<bytes>",
//        "numa_nodes": "0" ("" when not NUMA-bound), "hint_preferred": true,
//        "role": "storage-service", "numa_exclusive": false}}},
//    "machine": {"numa_nodes": "0-1", "node_total_bytes": {"0": "237706936320", ...}}}
//
// Byte counts are decimal strings: a checkpoint refuses floating-point numbers, and strings
// keep 64-bit values exact in every JSON reader. pod_resource_entries is the record of what
// each container holds; machineState is derived from it (and cross-checked on restore).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "common/status.h"
#include "plugins/memory/memory_state.h"

namespace qrm::memory {

// Version of the `data` schema above.
inline constexpr uint32_t kCheckpointVersion = 1;

// The whole version 1 `data` (tests write it to check the upgrade).
rapidjson::Document EncodeCheckpoint(const MemoryState& state);

// The design document's per-node view of `state`, as "machineState" in `data`.
void AddMachineState(const MemoryState& state, rapidjson::Value& data,
                     rapidjson::Document::AllocatorType& a);

// Restores the allocations recorded in `data` into `state`, which must be fresh (built from
// this machine and the current reservations). On error `state` may hold part of them and must
// be discarded. Errors:
//   kFailedPrecondition  written on a machine with other NUMA nodes (names both node lists);
//   kResourceExhausted   a recorded allocation no longer fits (e.g. a larger reservation);
//   kDataLoss            malformed content, naming the JSON key and value.
// Different node totals with the same nodes (firmware or kernel taking a few more pages
// after a reboot) are not an error: they are appended to `warnings` and the recorded
// allocations must still fit.
Status RestoreCheckpoint(const rapidjson::Value& data, MemoryState& state,
                         std::vector<std::string>* warnings);

}  // namespace qrm::memory
