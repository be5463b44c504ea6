// The CPU plugin's durable state: an SDK PodLedger (plugins/sdk/pod_ledger.h) at
// <state-dir>/cpu_plugin_state, with its journal beside it (cpu_plugin_state.journal).
//
// Version 2. One entry per container:
//   {"pod_namespace": "default", "pod_name": "pod1", "qos_level": "dedicated_cores",
//    "request_milli": 20000, "cpuset": "2-21",
//    "role": "storage-service", "numa_binding": true, "numa_exclusive": false,
//    "numa_nodes": "0"}                  (the last four only when set)
// Settings: "machine", the CPU layout the ledger was written on ("cpus 0-79, nodes 0:0-39
// 1:40-79"; a ledger of another layout is refused), "reclaimed_size" ("auto" or a number) and
// "shared_size" (a number; "0" or absent: the reclaimed_size setting is in force).
// Each snapshot also carries "machineState", the design document's per-NUMA view of the
// pools (reserved, allocated, default, shared, reclaimed cpusets) for operators: never read
// back, and current as of the snapshot (the plugin writes one at start, at a clean stop and
// at every compaction; `qrmctl topology` shows the live pools).
//
// Pools are not stored: they are a function of the dedicated CPUs and reclaimed_size, and are
// recomputed at load. A pool container's entry records the pool it ran on when written; in
// memory its CPUs are derived from the pools (cpu_state.h, ContainerCpus).
//
// Version 1 files (the whole state rewritten on every change, state_checkpoint.h) are read
// once and upgraded.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "checkpoint/checkpoint_file.h"
#include "checkpoint/journal.h"
#include "common/status.h"
#include "plugins/cpu/cpu_layout.h"
#include "plugins/cpu/cpu_state.h"
#include "plugins/sdk/pod_ledger.h"

namespace qrm::cpu {

inline constexpr uint32_t kLedgerVersion = 2;
inline constexpr const char* kStateFileName = "cpu_plugin_state";

struct ContainerCodec {
  static void Encode(const ContainerAllocation& c, sdk::EntryWriter& w);
  static StatusOr<ContainerAllocation> Decode(const sdk::EntryReader& r);
};

struct CpuLedgerOptions {
  std::string path;  // empty: nothing is kept on disk (unit tests of the allocation logic)
  bool reset_state = false;
  checkpoint::WriteOptions snapshot_write;
  checkpoint::JournalOptions journal_write;
  // The pools for the snapshot's view; called while the plugin holds its lock.
  std::function<CpuPools()> pools;
};

class CpuLedger {
 public:
  // Restores what the files hold into `state` (pods and reclaimed_size; pools not computed).
  // Refuses (kFailedPrecondition naming the way out, unless reset_state) a ledger of another
  // CPU layout or one holding dedicated CPUs that are now `reserved`; a corrupt one is set
  // aside and the plugin starts empty (checkpoint/state_file.h). With reset_state an
  // existing ledger is set aside unconditionally.
  static StatusOr<std::unique_ptr<CpuLedger>> Open(const CpuLedgerOptions& options,
                                                   const CpuLayout& layout, const CpuSet& reserved,
                                                   CpuState* state);

  Status Put(const std::string& pod_uid, const std::string& container,
             const ContainerAllocation& c);
  Status RemovePod(const std::string& pod_uid);
  // Records the size setting (CpuState::reclaimed_size and shared_size) as two settings,
  // ordered so that a crash between them leaves the old setting or the new one in force.
  Status SetPoolSetting(int reclaimed_size, int shared_size);
  Status WriteSnapshot();

 private:
  using Ledger = sdk::PodLedger<ContainerAllocation, ContainerCodec>;
  explicit CpuLedger(std::unique_ptr<Ledger> ledger) : ledger_(std::move(ledger)) {}

  std::unique_ptr<Ledger> ledger_;  // keeps nothing on disk when options.path is empty
};

// The refusal of a state file written on another CPU layout (`stored`; this machine: `here`),
// with the operator's way out. The version 1 reader and the ledger both give it.
Status OtherCpuLayoutError(const std::string& path, const std::string& stored,
                           const std::string& here);

// The design document's view of `pools` per NUMA node, as "machineState" in `data`.
void AddMachineState(const CpuLayout& layout, const CpuPools& pools, rapidjson::Value& data,
                     rapidjson::Document::AllocatorType& a);

}  // namespace qrm::cpu
