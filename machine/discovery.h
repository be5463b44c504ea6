// Discover: reads the machine's topology from sysfs and procfs (and, on the real machine,
// from libnuma, netlink and getifaddrs).
//
// Sources, relative to DiscoveryOptions::sysfs_root (S) and procfs_root (P):
//   CPUs     S/devices/system/cpu/online; per online CPU N, S/devices/system/cpu/cpuN/topology/
//            {physical_package_id, core_id} (required), die_id and thread_siblings_list
//            (optional).
//   NUMA     S/devices/system/node/online (else .../possible); per node M, nodeM/cpulist,
//            nodeM/meminfo ("Node M MemTotal: <n> kB", MemFree) (required), nodeM/distance and
//            nodeM/hugepages/hugepages-<size>kB/{nr,free}_hugepages (optional). A CPU in no
//            node's cpulist belongs to node 0 if there is exactly one node, else it is an error.
//            Without S/devices/system/node the machine is one node 0 holding every online CPU,
//            with memory from P/meminfo (MemTotal, MemFree) and huge pages from
//            S/kernel/mm/hugepages.
//   NICs     see "NICs" below.
//
// Strictness: a required file that is missing or unreadable, and any file whose content
// does not parse, fails discovery with a Status naming the file and the value
// ("<path>: cpu list \"0-x\": ..."). Optional files may be missing; they never fail
// discovery when absent.
//
// libnuma: only when `use_libnuma` is set and both roots are the real defaults ("/sys" and
// "/proc"). It then cross-checks the node count and each node's memory (a disagreement over
// 1% becomes a warning; sysfs values are kept) and fills distances the sysfs files lack. With
// overridden roots sysfs is the only source.
//
// NICs
//   Root namespace (the agent's own): every entry of S/class/net except `lo`. An interface
//   is physical when it has a `device` link (PCI, virtio, ...) and virtual otherwise
//   (veth, bridge, bond, ifb, ...); virtual ones are listed only with `include_virtual_nics`.
//   Per NIC: numa_node from device/numa_node, speed (Mb/s) from `speed`, `operstate`,
//   `address` (MAC), `ifindex`. Missing files are tolerated; a speed of 0 or -1 or an
//   unreadable speed (the kernel answers EINVAL for a link that is down) is "unknown" and
//   reported as `unknown_nic_speed_mbps`. A numa_node of -1 (or none) is unknown: 0 on a
//   single-node machine, -1 otherwise (the NIC plugin then treats the NIC as local to no
//   node); a numa_node naming a node that is not online is also reported as -1, with a
//   warning.
//   Addresses: with the real "/sys", from getifaddrs() (the calling thread's namespace, which
//   is the namespace /sys was mounted in for an agent that did not change it). With a fake
//   root, from S/class/net/<nic>/qrm_fake_addresses, one address per line: a TEST-ONLY
//   convention written by fake_machine.h; the kernel has no such file. IPv4 and IPv6
//   link-local addresses are omitted (nothing binds to them).
//
//   Named namespaces: every entry of `netns_dir` (sorted; a missing directory means none, one
//   that cannot be listed is a warning).
//   - Real machine (sysfs_root == "/sys"): /sys/class/net only shows the namespace sysfs was
//     mounted from, and remounting sysfs would need a private mount namespace. Instead a
//     short-lived thread opens the entry, joins it with setns(CLONE_NEWNET) and asks the
//     kernel directly: RTM_GETLINK and RTM_GETADDR over a NETLINK_ROUTE socket, and
//     SIOCETHTOOL (ETHTOOL_GSET) for the speed. What is reported per in-namespace NIC:
//       name, ifindex, MAC, operstate (from IFLA_OPERSTATE, same words as sysfs),
//       addresses (RTM_GETADDR), speed (ethtool; unknown as above),
//       physical/virtual: physical when the kernel reports a parent device
//         (IFLA_PARENT_DEV_NAME, Linux >= 5.16), or, on older kernels, when the link has
//         no IFLA_LINKINFO kind and is Ethernet;
//       numa_node: read from S/bus/<IFLA_PARENT_DEV_BUS_NAME>/devices/<IFLA_PARENT_DEV_NAME>
//         /numa_node, which is visible from every namespace; unknown (rules above) when the
//         kernel does not report the parent.
//     An entry that cannot be entered (not a namespace file, no CAP_SYS_ADMIN) is skipped
//     with a warning, and so is an entry that is the agent's own namespace (its NICs are
//     already listed as root-namespace NICs).
//   - Fake roots: each directory <netns_dir>/<ns> is laid out like a sysfs root holding
//     class/net/<nic> (and the devices/ its links point to); it is read exactly like the
//     root namespace's S/class/net, addresses from qrm_fake_addresses.
//   Every NIC records its namespace name and path (NicInfo::netns, netns_path).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "machine/topology.h"

namespace qrm::machine {

// Test-only fixture file: class/net/<nic>/qrm_fake_addresses holds the NIC's addresses, one
// per line, under a fake sysfs root (the kernel has no such file; see fake_machine.h).
inline constexpr char kFakeAddressesFile[] = "qrm_fake_addresses";

struct DiscoveryOptions {
  std::string sysfs_root = "/sys";
  std::string procfs_root = "/proc";
  std::string netns_dir = "/var/run/netns";
  // Reported as NicInfo::speed_mbps when the kernel does not know a NIC's speed.
  int64_t unknown_nic_speed_mbps = 0;
  // Cross-check and fill from libnuma; only honoured when both roots are the defaults.
  bool use_libnuma = true;
  // List NICs without a backing device (veth, bridges, ...). `lo` is never listed.
  bool include_virtual_nics = false;
  // Set false to skip NIC discovery entirely (CPU and memory plugins do not need it).
  bool discover_nics = true;
};

// True when the options read the real machine (sysfs_root is "/sys").
bool IsRealSysfs(const DiscoveryOptions& options);

StatusOr<MachineTopology> Discover(const DiscoveryOptions& options = {});

}  // namespace qrm::machine
