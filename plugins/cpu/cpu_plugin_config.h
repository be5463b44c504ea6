// CpuPluginConfig: everything the CPU plugin is configured with (flags / config file keys of
// qrm-cpu-plugin, see docs/cpu-plugin.md), and the checks that turn it into CPU sets.
#pragma once

#include <optional>
#include <string>

#include "checkpoint/checkpoint_file.h"
#include "checkpoint/journal.h"
#include "common/cpu_set.h"
#include "common/status.h"
#include "plugins/cpu/cpu_layout.h"

namespace qrm::cpu {

inline constexpr const char* kResourceName = "cpu";

struct CpuPluginConfig {
  // --reserved-cpus: CPU list for system_cores and the node's own daemons ("0-1,40-41").
  std::string reserved_cpus;
  // --reserved-cpu-count: as many CPUs, whole cores spread evenly over the NUMA nodes, lowest
  // ids first. At most one of the two may be set.
  int reserved_cpu_count = 0;
  // --reclaimed-pool-size when given explicitly: a size (never lowered: one that does not fit
  // is an error) or kReclaimedAuto (pools.h). When absent, the checkpoint's setting is kept,
  // or auto on a first start.
  std::optional<int> reclaimed_pool_size;
  // --roles: the role table as JSON (qos/qos_requirement.h).
  std::string roles_json;
  // --roles-file: a file holding that JSON (exclusive with --roles).
  std::string roles_file;
  // --state-dir: where cpu_plugin_state lives. Empty keeps nothing on disk (unit tests).
  std::string state_dir;
  // --pool-control-file; empty means <state_dir>/pools.json (none without a state dir).
  std::string pool_control_file;
  // --reset-state: move an existing checkpoint aside and start empty.
  bool reset_state = false;
  // Tests inject faults into the ledger's snapshot writes and journal appends here.
  checkpoint::WriteOptions write_options;
  checkpoint::JournalOptions journal_options;

  std::string StatePath() const;
  std::string PoolControlPath() const;
};

// The reserved CPUs the config asks for. kInvalidArgument naming the key and the value: both
// keys set, a malformed list, CPUs not on the machine (named), a negative count, or a count
// that leaves nothing to allocate.
StatusOr<CpuSet> ResolveReservedCpus(const CpuLayout& layout, const CpuPluginConfig& config);

}  // namespace qrm::cpu
