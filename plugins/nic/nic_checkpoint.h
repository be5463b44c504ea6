// Version 1 of the NIC plugin's state file (<state-dir>/nic_plugin_state), which rewrote the
// whole state on every change. The plugin now keeps a ledger (nic_ledger.h, version 2) and
// reads this format only to upgrade a file an older plugin wrote; its "machineState" is also
// each ledger snapshot's view. The `data`, in the design document's shape (example 3):
//
//   {"machineState": {
//      "0": {"nics": [{"interface_name": "eth0", "numa_node": 0,
//                      "address": {"ipv4": "10.0.0.10", "ipv6": "fd00::10"},
//                      "speed_mbps": 25000, "bandwidth_allocated_mbps": 0}]},
//      "1": {"nics": [{"interface_name": "eth1", "numa_node": 1, "address": {...},
//                      "netns": "/var/run/netns/ns1", ...}]},
//      "-1": {...NICs on no known node...}},
//    "pod_entries": {"<pod uid>": {"<container>": {
//        "pod_name": "pod1", "pod_namespace": "default",
//        "interface_name": "eth1", "netns_name": "ns1", "netns": "/var/run/netns/ns1",
//        "numa_node": 1, "bandwidth_mbps": 0, "address": {"ipv6": "fd00:1::10"},
//        "hint_preferred": true}}}}
//
// "netns" (a path) and address families a NIC lacks are left out, as in the document.
// pod_entries is the record; machineState describes the NICs served when it was written
// and is rebuilt from discovery on every start.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "common/status.h"
#include "plugins/nic/nic_state.h"

namespace qrm::nic {

inline constexpr uint32_t kCheckpointVersion = 1;

// The whole version 1 `data` (tests write it to check the upgrade).
rapidjson::Document EncodeCheckpoint(const NicState& state);

// The design document's per-node view of the NICs served, as "machineState" in `data`.
void AddMachineState(const NicState& state, rapidjson::Value& data,
                     rapidjson::Document::AllocatorType& a);

// Restores the pod entries of `data` into the fresh `state`. kDataLoss naming the JSON key and
// value for malformed content (on error `state` must be discarded). Entries whose NIC is no
// longer served, or whose NICs now have less capacity than is recorded on them, are kept
// and described in `warnings`: the containers exist, and the other NICs stay usable.
Status RestoreCheckpoint(const rapidjson::Value& data, NicState& state,
                         std::vector<std::string>* warnings);

}  // namespace qrm::nic
