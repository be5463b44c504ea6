// Minimal rtnetlink and ethtool access for listing the NICs of a network namespace that
// /sys cannot show (plain NETLINK_ROUTE sockets, no libnl). Every call works in the network
// namespace of the calling thread; RunInNetns runs code in another one.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace qrm::machine::netlink {

struct Link {
  int ifindex = 0;
  std::string name;       // IFLA_IFNAME
  std::string mac;        // IFLA_ADDRESS as "aa:bb:..." ("" when absent)
  std::string operstate;  // IFLA_OPERSTATE in sysfs words: "up", "down", "unknown", ...
  uint16_t type = 0;      // ARPHRD_* (ARPHRD_LOOPBACK for lo)
  uint32_t flags = 0;     // IFF_*
  std::string kind;       // IFLA_LINKINFO/IFLA_INFO_KIND ("veth", "bridge"; "" for hardware)
  // The device behind the interface (IFLA_PARENT_DEV_NAME / IFLA_PARENT_DEV_BUS_NAME, Linux
  // >= 5.16), e.g. "0000:3b:00.0" on bus "pci"; "" when the kernel does not report one.
  std::string parent_dev;
  std::string parent_bus;
};

struct Address {
  int ifindex = 0;
  int family = 0;       // AF_INET or AF_INET6
  std::string address;  // canonical text (inet_ntop)
  int scope = 0;        // RT_SCOPE_*
};

// RTM_GETLINK / RTM_GETADDR dumps of the calling thread's network namespace.
StatusOr<std::vector<Link>> ListLinks();
StatusOr<std::vector<Address>> ListAddresses();

// Link speed in Mb/s from SIOCETHTOOL/ETHTOOL_GSET; nullopt when the driver does not report
// one, reports 0 or SPEED_UNKNOWN (links that are down), or the ioctl fails.
std::optional<int64_t> EthtoolSpeedMbps(const std::string& ifname);

// True when `netns_path` (an nsfs file such as /var/run/netns/ns1) is the calling thread's
// own network namespace.
StatusOr<bool> IsOwnNetns(const std::string& netns_path);

// Runs `fn` on a new thread that has joined the network namespace `netns_path` with
// setns(CLONE_NEWNET), and returns its Status. The thread ends afterwards, so the caller's
// namespace never changes. Errors name the path: open failures keep their errno code,
// setns failures are kFailedPrecondition (not a network namespace) or kPermissionDenied.
Status RunInNetns(const std::string& netns_path, const std::function<Status()>& fn);

}  // namespace qrm::machine::netlink
