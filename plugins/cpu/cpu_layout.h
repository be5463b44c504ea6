// CpuLayout: the machine's CPUs indexed the way CPU allocation asks about them.
//
// MachineTopology answers "which threads share this core" by scanning every CPU; the CPU
// plugin asks such questions for every candidate on every admission, so it builds this index
// once at start-up: cores with their node and socket, and the CPUs of every node and socket.
#pragma once

#include <map>
#include <vector>

#include "common/cpu_set.h"
#include "common/numa_mask.h"
#include "machine/topology.h"

namespace qrm::cpu {

// One physical core: its online hardware threads and where it sits.
struct CoreInfo {
  CpuSet threads;
  int node = 0;
  int socket = 0;
  int first_cpu = 0;  // lowest thread id; cores are ordered by it
  int last_cpu = 0;   // highest thread id
};

class CpuLayout {
 public:
  CpuLayout() = default;
  explicit CpuLayout(const machine::MachineTopology& topology);

  const CpuSet& online() const { return online_; }
  // Cores ordered by their lowest thread id.
  const std::vector<CoreInfo>& cores() const { return cores_; }
  // Index into cores() of the core holding `cpu` (which must be online).
  int CoreOf(int cpu) const;
  int NodeOf(int cpu) const { return cores_[CoreOf(cpu)].node; }

  // Every NUMA node id, including memory-only ones, ascending.
  const std::vector<int>& nodes() const { return nodes_; }
  // Node ids with at least one online CPU, ascending.
  const std::vector<int>& cpu_nodes() const { return cpu_nodes_; }
  NumaMask cpu_node_mask() const { return cpu_node_mask_; }
  // Node id -> its online CPUs (empty for memory-only nodes).
  const std::map<int, CpuSet>& node_cpus() const { return node_cpus_; }
  CpuSet NodeCpus(int node) const;
  CpuSet MaskCpus(NumaMask mask) const;  // union of the nodes' CPUs
  // The nodes `cpus` touch.
  NumaMask NodesOf(const CpuSet& cpus) const;

  // Socket (package) id -> its online CPUs.
  const std::map<int, CpuSet>& socket_cpus() const { return socket_cpus_; }
  int SocketOfNode(int node) const;

  // Most threads on one core (1 without SMT).
  int threads_per_core() const { return threads_per_core_; }
  // Whether `core` has as many online threads as a core has here. A core whose sibling is
  // offline is not whole: like a half-used core, it is handed out one thread at a time (as the
  // kubelet, whose free cores have all CPUsPerCore threads free).
  bool IsWholeCore(const CoreInfo& core) const { return core.threads.Size() == threads_per_core_; }

 private:
  CpuSet online_;
  std::vector<CoreInfo> cores_;
  std::vector<int> core_of_cpu_;  // by CPU id; -1 for ids that are not online
  std::vector<int> nodes_;
  std::vector<int> cpu_nodes_;
  NumaMask cpu_node_mask_;
  std::map<int, CpuSet> node_cpus_;
  std::map<int, CpuSet> socket_cpus_;
  std::map<int, int> socket_of_node_;
  int threads_per_core_ = 1;
};

}  // namespace qrm::cpu
