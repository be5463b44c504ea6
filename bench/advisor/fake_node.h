// FakeNode: a node for the advisor's benchmarks (advisor_bench, advisor_rss_probe), made of
// files and memory only. Under a scratch directory (tmpfs when there is one):
//
//   cgroup/cpuacct/<path>/cpuacct.usage             per container, cgroup v1
//   cgroup/memory/<path>/memory.usage_in_bytes       with memory.stat (total_inactive_file)
//   proc/stat, proc/meminfo                          the node
//   cpu/pools.json                                   the CPU plugin's pool control file
//
// whose counters advance at known rates as simulated time goes on (AdvanceTo), so that a
// benchmark can check what the advisor sampled, and the qrm-host and runtime sources the
// Agent asks who runs there. The files look like a real host's (memory.stat with every key,
// /proc/stat with per-CPU and interrupt lines), so reading them costs what it costs on a node.
// Benchmark-only code.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "advisor/agent/agent.h"
#include "cmd/qrm-advisor/daemon_config.h"

namespace qrm::bench::advisor {

struct FakeNodeOptions {
  int containers = 200;
  int containers_per_pod = 1;
  int online_cpus = 104;         // the cpuN lines of /proc/stat
  int reserved_cpus = 8;         // allocatable = online - reserved (CPUs 0-7)
  int dedicated_containers = 4;  // dedicated_cores, 4 CPUs each, after the reserved CPUs
  int reclaimed_every = 5;       // of the other pods, every 5th is reclaimed_cores
  double busy_share = 0.4;       // the pool CPUs' average use by the other containers
};

// One container: who it is, what qrm-host says about it, and its usage.
struct FakeContainer {
  qrm::advisor::TrackedContainer tracked;  // as the runtime lists it (no qos_level)
  std::string qos_level;
  std::string cpuset;
  double level_cores = 0;    // average CPU use
  uint64_t level_bytes = 0;  // average working set
  std::string cpu_file, usage_file, stat_file;
  uint64_t cpu_ns = 0;  // cpuacct.usage as last written
};

class FakeNode {
 public:
  // Creates the scratch directory and writes every file as of second 0; throws
  // std::runtime_error when a file cannot be written.
  explicit FakeNode(const FakeNodeOptions& options);
  ~FakeNode();
  FakeNode(const FakeNode&) = delete;
  FakeNode& operator=(const FakeNode&) = delete;

  // Moves simulated time on to `second` (after the last one): the CPU counters (every
  // container's and /proc/stat) and, with `memory`, the memory files and /proc/meminfo are
  // rewritten as of then.
  void AdvanceTo(int64_t second, bool memory);

  // Container i's CPU use (cores) during the second ending at `second`: constant within a
  // minute, varying between minutes and containers, so the models see a spread of values.
  double Cores(size_t i, int64_t second) const;
  // Its working set (bytes) as of `second`.
  uint64_t WorkingSet(size_t i, int64_t second) const;
  // The node's busy cores during the second ending at `second` (containers + system).
  double NodeCores(int64_t second) const;

  const std::vector<FakeContainer>& containers() const { return containers_; }
  int pods() const;
  int allocatable_cpus() const { return options_.online_cpus - options_.reserved_cpus; }
  int64_t second() const { return second_; }

  std::unique_ptr<qrm::advisor::HostSource> MakeHostSource() const;
  std::unique_ptr<qrm::advisor::RuntimeSource> MakeRuntimeSource() const;

  // Flags that point qrm-advisor at this node: cgroup and procfs roots, the pool control
  // file, the state directory, the advisor's socket (for the calling user), no /metrics.
  std::vector<std::string> DaemonArgs() const;
  const std::string& dir() const { return dir_; }
  // The destructor leaves the files (another process owns them now).
  void KeepFiles() { keep_files_ = true; }

 private:
  FakeContainer MakeContainer(int i, const std::string& shared, const std::string& reclaimed) const;
  void MakeContainers();
  void WriteCpu(size_t i);
  void WriteMemory(size_t i, int64_t second);
  void WriteProcStat();
  void WriteMeminfo(int64_t second);
  double MinuteFactor(size_t i, int64_t second) const;

  FakeNodeOptions options_;
  std::string dir_;
  std::vector<FakeContainer> containers_;
  int64_t second_ = 0;
  double busy_ticks_ = 0;  // /proc/stat's cpu line (USER_HZ ticks), exact
  uint64_t total_ticks_ = 0;
  bool keep_files_ = false;
};

// What the advisor sampled of one container at a tick.
struct SampledContainer {
  size_t index = 0;  // into FakeNode::containers() (the runtime lists them in that order)
  std::string key;   // "<pod uid>/<name>"
  std::optional<double> cpu;
  double memory = 0;
};

// Empty when `samples` and `node_cpu` are what `node` wrote for simulated `second`: every
// container, with its CPU rate (after the first second) and its working set as of
// `memory_second` (when the memory files were last written), and the node's CPU; else what
// differs.
std::string CheckSamples(const FakeNode& node, const std::vector<SampledContainer>& samples,
                         std::optional<double> node_cpu, int64_t second, int64_t memory_second);

// What the agent's last tick sampled.
std::vector<SampledContainer> LastTickSamples(const qrm::advisor::Agent& agent,
                                              std::optional<double>& node_cpu);

// The daemon's configuration (qrm-advisor's own flags and defaults, daemon_config.h) for
// `node`, with `extra` flags after the node's.
StatusOr<qrm::advisor_cmd::DaemonConfig> DaemonConfigFor(const FakeNode& node,
                                                         const std::vector<std::string>& extra);

}  // namespace qrm::bench::advisor
