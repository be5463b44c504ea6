// Fake machines for tests: writes sysfs/procfs/netns trees that Discover reads like the real
// thing (qrm::machine_fake; the CLI is `qrm-fake-machine --shape doc80 --out DIR`).
//
// A shape is data, so tests of every plugin can describe the machine they need. Cores are
// numbered node by node (node 0 gets cores 0..c0-1, node 1 the next c1, ...). By default SMT
// siblings are ADJACENT (threads_per_core = 2: cpus 2k and 2k+1 share core k); with
// split_siblings they are numbered as Intel machines do, the first threads of every core
// first (core k of C cores has cpus k, k+C, ...). Node i sits in package i / nodes_per_socket;
// core ids restart at 0 in every package, as on x86. Offline CPUs are written as the kernel
// shows a CPU taken down: possible and present, not online, absent from node cpulists and
// sibling lists, with no topology directory.
//
// Tree written under DIR:
//   DIR/sys/devices/system/cpu/{online,possible,present}
//   DIR/sys/devices/system/cpu/cpu<N>/topology/{physical_package_id,die_id,core_id,
//       thread_siblings_list,core_siblings_list,core_cpus_list,package_cpus_list}
//   DIR/sys/devices/system/node/{online,possible,has_cpu,has_memory}   (write_node_dir)
//   DIR/sys/devices/system/node/node<M>/{cpulist,meminfo,distance,
//       hugepages/hugepages-<size>kB/{nr_hugepages,free_hugepages}}
//   DIR/sys/kernel/mm/hugepages/hugepages-<size>kB/{nr,free}_hugepages  (sums over nodes)
//   DIR/proc/meminfo                                   (MemTotal, MemFree, MemAvailable)
//   NICs of the root namespace, as the kernel lays them out:
//     DIR/sys/devices/pci0000:00/<pci>/numa_node
//     DIR/sys/devices/pci0000:00/<pci>/net/<nic>/{address,operstate,speed,ifindex,type,
//         qrm_fake_addresses}, with device -> ../../../<pci>
//     DIR/sys/devices/virtual/net/<nic>/...              (virtual NICs and lo: no device)
//     DIR/sys/class/net/<nic> -> ../../devices/.../net/<nic>
//   NICs of namespace <ns>: the same layout under DIR/netns/<ns>/ (devices/ and class/net/).
//   `lo` is written in every namespace (Discover never lists it).
// qrm_fake_addresses is a TEST-ONLY file (one address per line) standing in for the
// addresses getifaddrs()/netlink would report; the kernel has no such file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/cpu_set.h"
#include "common/status.h"
#include "machine/discovery.h"

namespace qrm::machine::fake {

struct FakeHugePages {
  uint64_t page_size_kb = 2048;
  uint64_t total_pages = 0;
  uint64_t free_pages = 0;
};

struct FakeNode {
  int cpus = 0;               // 0: a memory-only node
  uint64_t memory_bytes = 0;  // MemTotal; rounded down to whole kB when written
  uint64_t free_bytes = 0;    // MemFree
  std::vector<FakeHugePages> hugepages;
};

struct FakeNic {
  std::string name;
  std::string netns;   // "" = root namespace
  int numa_node = -1;  // device/numa_node (physical NICs only)
  // Raw content of `speed`; nullopt leaves the file out (as if unreadable).
  std::optional<std::string> speed = "25000";
  std::string operstate = "up";
  std::string mac;
  std::vector<std::string> addresses;  // written to qrm_fake_addresses, one per line
  bool is_virtual = false;             // no device link (veth, bridge, ...)
  int ifindex = 0;                     // 0: assigned in order (lo is 1 in every namespace)
};

struct FakeMachineShape {
  std::string name;
  std::vector<FakeNode> nodes;
  int threads_per_core = 1;  // every node's cpus must be a multiple of it
  int nodes_per_socket = 1;
  // distances[i][j]; empty: 10 local, 12 within a socket, 21 across sockets.
  std::vector<std::vector<int>> distances;
  std::vector<FakeNic> nics;
  // false: no sys/devices/system/node (a kernel without NUMA): one node from /proc/meminfo.
  bool write_node_dir = true;
  // Intel-style sibling numbering (see above); false: adjacent siblings.
  bool split_siblings = false;
  // CPUs that exist but are offline (each must be below NumCpus()).
  CpuSet offline_cpus;

  int NumCpus() const;  // possible CPUs, offline ones included
  int NumCores() const { return NumCpus() / threads_per_core; }
  CpuSet CoreCpus(int core) const;  // every thread of core `core`, offline ones included
  CpuSet NodeCpus(int node) const;  // the online CPUs the layout above gives node `node`
  int SocketOfNode(int node) const { return node / nodes_per_socket; }
  int Distance(int from, int to) const;
};

// Where a written fake machine lives; Options() points discovery at it.
struct FakeMachinePaths {
  std::string root;
  std::string sysfs_root;   // root + "/sys"
  std::string procfs_root;  // root + "/proc"
  std::string netns_dir;    // root + "/netns"
  DiscoveryOptions Options() const;
};

// Writes the tree for `shape` under `dir` (created if missing; existing files are
// overwritten). kInvalidArgument for an inconsistent shape (cpus not a multiple of
// threads_per_core, a NIC on a node that does not exist, a distance matrix of the wrong
// size), I/O errors naming the path otherwise.
StatusOr<FakeMachinePaths> WriteFakeMachine(const FakeMachineShape& shape, const std::string& dir);

// The built-in shapes:
//   doc80    the design document's machine: 2 sockets, node 0 = cpus 0-39, node 1 = 40-79,
//            SMT 2 (adjacent siblings), 237706936320 and 237806551040 bytes of memory,
//            distances 10/21; eth0 on node 0 in the root namespace (10.0.0.10, fd00::10) and
//            eth1 on node 1 in netns "ns1" (10.0.1.10, fd00:1::10), both 25000 Mb/s.
//   4x32smt  4 nodes x 32 cpus, SMT 2, two nodes per socket (2 sockets, sub-NUMA clustering
//            style), 64 GiB per node, 1 GiB huge pages; distances 10/12/21; eth0..eth3 (one
//            per node, 100000 Mb/s) and a virtual veth0.
//   nosmt    one node, 16 cpus, no SMT, 32 GiB; eth0 with numa_node -1 and speed -1.
//   memonly  node 0: 16 cpus (SMT 2) and 32 GiB; node 1: no cpus, 64 GiB; eth0 with
//            numa_node -1 and speed 0.
// Shapes for CPU placement (no NICs, 16 GiB per node):
//   snc4      1 socket, 4 nodes (sub-NUMA clustering) of 4 cores, SMT 2 adjacent: node n has
//             cpus 8n..8n+7.
//   intel96   2 sockets x 2 nodes x 12 cores, SMT 2 split: cpu i and i+48 share a core; node 0
//             has 0-11,48-59, node 1 12-23,60-71, node 2 24-35,72-83, node 3 36-47,84-95.
//   snc4x2off 2 sockets x 4 nodes x 4 cores, SMT 2 split (cpu i and i+32 share a core), cpus
//             38 (sibling of 6, node 1), 63 (sibling of 31, node 7), 13 and 45 (all of core
//             13, node 3) offline: 60 online cpus; node 1 has 4-7,36-37,39.
//   2cpu      the smallest VM: one node, one core of two threads (cpus 0-1).
std::vector<std::string> ShapeNames();
StatusOr<FakeMachineShape> ShapeByName(std::string_view name);
FakeMachineShape Doc80Shape();
FakeMachineShape FourBy32SmtShape();
FakeMachineShape NoSmtShape();
FakeMachineShape MemOnlyShape();
FakeMachineShape Snc4Shape();
FakeMachineShape Intel96Shape();
FakeMachineShape Snc4x2OfflineShape();
FakeMachineShape TwoCpuShape();

}  // namespace qrm::machine::fake
