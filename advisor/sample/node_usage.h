// The node's own counters from procfs: CPU time from /proc/stat and memory from
// /proc/meminfo. Node CPU used = busy time (user, nice, system, irq, softirq, steal; guest
// time is inside user) over all time, times the CPUs listed; node memory used = MemTotal -
// MemAvailable (Koordinator's node usage). Malformed files are kDataLoss naming the file and
// the field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"

namespace qrm::advisor {

struct NodeCounters {
  uint64_t cpu_busy_ticks = 0;
  uint64_t cpu_total_ticks = 0;
  int cpus = 0;                   // the cpuN lines of /proc/stat
  uint64_t memory_total = 0;      // bytes
  uint64_t memory_available = 0;  // bytes
};

// `procfs_root` is usually /proc.
StatusOr<NodeCounters> ReadNodeCounters(const std::string& procfs_root);

// The parsers, for tests and the fuzz target.
Status ParseProcStat(const std::string& content, NodeCounters& out);
Status ParseMeminfo(const std::string& content, NodeCounters& out);

// CPU cores used between two readings of the same node; nullopt when the counters did not
// advance (or went back: a reset).
std::optional<double> NodeCoresUsed(const NodeCounters& before, const NodeCounters& after);

}  // namespace qrm::advisor
