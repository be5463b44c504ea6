// Sampler: one tick of usage sampling. It reads the node's counters from procfs and every
// tracked container's cgroup, turns CPU counters into cores (CpuRate, per container), and
// returns the tick's usage. Nothing it cannot read is guessed: a container whose cgroup
// vanished or is unreadable is left out of the tick (and counted), a first reading or a reset
// counter gives no CPU value, and system usage is only given when the node's is known.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "advisor/agent/tracked_container.h"
#include "advisor/sample/cgroup_usage.h"
#include "advisor/sample/cpu_rate.h"
#include "advisor/sample/node_usage.h"
#include "common/log.h"
#include "common/rate_limited_log.h"

namespace qrm::advisor {

struct SamplerOptions {
  std::string cgroup_root = "/sys/fs/cgroup";
  std::string procfs_root = "/proc";
};

struct ContainerSample {
  size_t index = 0;           // into the containers given to Sample
  std::optional<double> cpu;  // cores; none on the first reading or after a reset
  double memory = 0;          // working set, bytes
};

struct TickUsage {
  int64_t time = 0;                   // Unix seconds of the tick
  std::optional<double> node_cpu;     // cores
  std::optional<double> node_memory;  // bytes used (MemTotal - MemAvailable)
  double cpu_capacity = 0;            // CPUs online
  double memory_capacity = 0;         // MemTotal
  std::vector<ContainerSample> containers;
  size_t vanished = 0;    // cgroups gone between listing and reading
  size_t unreadable = 0;  // cgroups that could not be read or parsed
};

struct SamplerCounters {
  uint64_t ticks = 0;
  uint64_t node_errors = 0;
  uint64_t vanished = 0;
  uint64_t unreadable = 0;
  uint64_t cpu_resets = 0;  // counters that went back (CpuRate)
};

class Sampler {
 public:
  explicit Sampler(const SamplerOptions& options);

  // Samples the node and `containers` at `time` (Unix seconds); `mono_ns` is a monotonic
  // clock for the CPU rates. Per-container rate state is kept by key and dropped for
  // containers no longer given.
  TickUsage Sample(const std::vector<TrackedContainer>& containers, int64_t time, int64_t mono_ns);

  const SamplerCounters& counters() const { return counters_; }
  CgroupVersion cgroup_version() const { return reader_.version(); }

 private:
  void SampleNode(TickUsage& tick);
  void SampleContainer(const TrackedContainer& c, size_t index, int64_t mono_ns, TickUsage& tick,
                       std::map<std::string, CpuRate>& rates);

  SamplerOptions options_;
  CgroupReader reader_;
  std::optional<NodeCounters> last_node_;
  std::map<std::string, CpuRate> rates_;
  uint64_t retired_resets_ = 0;  // resets of rate states since dropped
  SamplerCounters counters_;
  std::shared_ptr<spdlog::logger> log_;
  RateLimitedLog unreadable_log_;
};

}  // namespace qrm::advisor
