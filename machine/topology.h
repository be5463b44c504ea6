// MachineTopology: what the CPU, memory and NIC plugins know about the machine they run on.
//
// A plain value produced by Discover (machine/discovery.h) or built by hand in tests:
// online CPUs with their package/die/core/NUMA placement, NUMA nodes with memory, distances
// and huge pages, and the NICs (physical ones, optionally virtual ones) of the root network
// namespace and of every named namespace. The derived queries below are what allocation
// code asks for ("which threads share this core", "which CPUs are on node 1"); they are
// computed from the vectors, so a hand-built topology answers them too.
//
// Invariants established by Discover (and expected by the helpers):
//   - `cpus` is sorted by id and holds online CPUs only; every CPU is on exactly one node.
//   - `nodes` is sorted by id, ids are below NumaMask::kMaxNodes (64); a node's `cpus` may be
//     empty (a memory-only node).
//   - `nics` lists the root namespace first, then namespaces by name; names within one
//     namespace are sorted.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/cpu_set.h"
#include "common/numa_mask.h"

namespace qrm::machine {

// One online logical CPU.
struct CpuInfo {
  int id = 0;
  int package_id = 0;  // topology/physical_package_id (-1 from the kernel is reported as 0)
  int die_id = 0;      // topology/die_id, 0 when the kernel does not expose it
  int core_id = 0;     // topology/core_id: unique within a package and die only
  int node = 0;        // the NUMA node whose cpulist holds this CPU
  // topology/thread_siblings_list as the kernel reports it (contains `id`). When the file is
  // missing, the online CPUs with the same core key.
  CpuSet thread_siblings;

  friend bool operator==(const CpuInfo&, const CpuInfo&) = default;
};

// A physical core is identified by package, die and core id together: core_id restarts in
// every package on x86, so core_id alone is ambiguous on multi-socket machines.
struct CoreKey {
  int package_id = 0;
  int die_id = 0;
  int core_id = 0;

  friend auto operator<=>(const CoreKey&, const CoreKey&) = default;
};

struct Core {
  CoreKey key;
  int node = 0;    // NUMA node of the core's first thread
  CpuSet threads;  // its online hardware threads

  friend bool operator==(const Core&, const Core&) = default;
};

// One huge page pool of a node (node<M>/hugepages/hugepages-<size>kB).
struct HugePagePool {
  uint64_t page_size_bytes = 0;
  uint64_t total_pages = 0;  // nr_hugepages
  uint64_t free_pages = 0;   // free_hugepages

  friend bool operator==(const HugePagePool&, const HugePagePool&) = default;
};

struct NumaNodeInfo {
  int id = 0;
  CpuSet cpus;  // online CPUs of the node; empty for a memory-only node
  uint64_t memory_total_bytes = 0;
  uint64_t memory_free_bytes = 0;  // at discovery time
  // Distance to each node, by node id (node<M>/distance; 10 = local).
  std::map<int, int> distances;
  std::vector<HugePagePool> hugepages;  // ascending page size

  friend bool operator==(const NumaNodeInfo&, const NumaNodeInfo&) = default;
};

struct NicInfo {
  std::string name;  // interface name inside its namespace ("eth0")
  // Network namespace: "" and "" for the namespace the agent runs in (the "root" namespace);
  // otherwise the entry name under DiscoveryOptions::netns_dir ("ns1") and its full path
  // ("/var/run/netns/ns1"), the value for the kubernetes.io/host-netns-path annotation.
  std::string netns;
  std::string netns_path;
  int ifindex = 0;  // 0 when unknown
  // NUMA node of the NIC's device; -1 when unknown on a multi-node machine (no device, or the
  // platform reports -1). On a single-node machine an unknown node is reported as 0.
  int numa_node = -1;
  int64_t speed_mbps = 0;         // link speed; DiscoveryOptions::unknown_nic_speed_mbps if unknown
  bool speed_known = false;       // false when the kernel reported 0, -1 or nothing
  std::string operstate;          // "up", "down", "unknown", ... ("" when unreadable)
  std::string mac;                // "02:fc:00:00:00:01" ("" when unreadable)
  bool is_virtual = false;        // no backing device (veth, bridge, ...); listed only on request
  std::vector<std::string> ipv4;  // canonical text, link-local (169.254/16) omitted
  std::vector<std::string> ipv6;  // canonical text, link-local (fe80::/10) omitted

  friend bool operator==(const NicInfo&, const NicInfo&) = default;
};

struct MachineTopology {
  std::vector<CpuInfo> cpus;
  std::vector<NumaNodeInfo> nodes;
  std::vector<NicInfo> nics;
  // Things discovery tolerated and an operator may want to know (a namespace it could not
  // enter, libnuma disagreeing with sysfs, a NIC on an unknown node). Never errors.
  std::vector<std::string> warnings;

  // --- CPUs -----------------------------------------------------------------
  int NumCpus() const { return static_cast<int>(cpus.size()); }
  CpuSet OnlineCpus() const;
  const CpuInfo* Cpu(int id) const;  // nullptr when not an online CPU
  std::optional<int> NodeOfCpu(int cpu) const;
  // Cores sorted by key, each with its online threads.
  std::vector<Core> Cores() const;
  // The threads sharing a core with `cpu` (including it); empty when `cpu` is not online.
  CpuSet CoreThreads(int cpu) const;
  // Largest number of online threads on one core (1 without SMT).
  int ThreadsPerCore() const;
  // Package id -> its online CPUs.
  std::map<int, CpuSet> Sockets() const;
  CpuSet SocketCpus(int package_id) const;

  // --- NUMA -----------------------------------------------------------------
  int NumNodes() const { return static_cast<int>(nodes.size()); }
  NumaMask NodeMask() const;               // every node, including memory-only ones
  NumaMask NodesWithCpus() const;          // nodes with at least one online CPU
  const NumaNodeInfo* Node(int id) const;  // nullptr when unknown
  CpuSet NodeCpus(int node) const;         // empty when unknown
  // Node id -> its CPUs, for every node (memory-only nodes map to an empty set).
  std::map<int, CpuSet> NodeCpuSets() const;
  std::optional<int> Distance(int from, int to) const;
  uint64_t TotalMemoryBytes() const;

  // --- NICs -----------------------------------------------------------------
  // NICs whose numa_node is `node` (unknown-node NICs are never returned).
  std::vector<const NicInfo*> NicsOnNode(int node) const;
  const NicInfo* Nic(const std::string& name, const std::string& netns = "") const;

  // A multi-line summary for logs:
  //   80 cpus (0-79), 2 sockets, 40 cores, 2 threads/core, 2 numa nodes, 1 nic
  //   node 0: cpus 0-39, memory 221.38 GiB (free 200.00 GiB), distances 10 21
  //   nic eth0: node 0, 25000 Mb/s, up, 02:00:00:00:00:10, 10.0.0.10 fd00::10
  //   nic eth1 (netns ns1 /var/run/netns/ns1): ...
  //   warning: ...
  std::string Describe() const;
  // One line: "80 cpus (0-79), 2 sockets, 40 cores, 2 threads/core, 2 numa nodes, 2 nics".
  std::string Summary() const;

  friend bool operator==(const MachineTopology&, const MachineTopology&) = default;
};

}  // namespace qrm::machine
