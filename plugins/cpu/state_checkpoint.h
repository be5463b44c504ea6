// Version 1 of the CPU plugin's state file (<state-dir>/cpu_plugin_state), which rewrote the
// whole state on every change. The plugin now keeps a ledger (cpu_ledger.h, version 2) and
// reads this format only to upgrade a file an older plugin wrote. Its data is
//
//   {"machineState": {"0": {"reserved_cpuset": "0-1", "allocated_cpuset": "2-21",
//                           "default_cpuset": "22-39", "shared_cpuset": "22-37",
//                           "reclaimed_cpuset": "38-39"}, ...},
//    "pod_entries": {"<pod uid>": {"<container>": {
//        "pod_namespace": "default", "pod_name": "pod1", "qos_level": "dedicated_cores",
//        "role": "storage-service", "numa_binding": true, "numa_exclusive": false,
//        "request_milli": 20000, "cpuset": "2-21", "numa_nodes": "0"}}},
//    "pools": {"reclaimed_size": 4},
//    "machine": {"cpus": "0-79", "nodes": {"0": "0-39", "1": "40-79"}}}
//
// machineState is the design document's per-NUMA view (default_cpuset = shared + reclaimed),
// written for operators and never read back: pools are recomputed from pod_entries and
// reclaimed_size. Requests are milli-CPUs because checkpoints hold no floating point. role,
// numa_binding, numa_exclusive and numa_nodes are left out when empty/false (the file is
// rewritten on every admission; most containers are pool containers without them).
// "machine" is the CPU layout the file was written on; a file from another layout is refused.
#pragma once

#include <cstdint>
#include <string>

#include <rapidjson/document.h>

#include "checkpoint/checkpoint_file.h"
#include "common/status.h"
#include "plugins/cpu/cpu_layout.h"
#include "plugins/cpu/cpu_state.h"

namespace qrm::cpu {

inline constexpr uint32_t kStateVersion = 1;

// The checkpoint's data. The document refers to `state`'s strings: use it before `state`
// changes or goes away.
rapidjson::Document EncodeState(const CpuLayout& layout, const CpuState& state);

// Decodes pod_entries and pools of a checkpoint written on `layout` (the returned state's pools
// are not computed yet; pool containers' cpusets are dropped, as CpuState does).
// kFailedPrecondition when "machine" differs from `layout`, with the operator's way out; kDataLoss
// naming `path` and the entry for anything malformed.
StatusOr<CpuState> DecodeState(const rapidjson::Value& data, const CpuLayout& layout,
                               const std::string& path);

}  // namespace qrm::cpu
