#include "machine/nic_discovery.h"

#include <algorithm>
#include <cerrno>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <linux/if_arp.h>
#include <netinet/in.h>

#include "machine/netlink.h"
#include "machine/sysfs.h"

namespace qrm::machine {

namespace {

// A NIC as read, before its NUMA node is resolved against the machine's nodes.
struct RawNic {
  NicInfo info;
  std::optional<int64_t> numa_node;  // as reported; nullopt when nothing was reported
  std::string numa_source;           // the file it came from, for messages
};

enum class AddressCheck { kStrict, kLenient };

// Parses `text`, drops link-local addresses and appends the canonical form to the NIC.
// kStrict (fixture files) reports unparsable text as an error naming `source`; kLenient
// (addresses the kernel gave us) ignores it.
Status AddAddress(NicInfo& nic, const std::string& text, const std::string& source,
                  AddressCheck check) {
  unsigned char bytes[16] = {};
  int family = AF_INET;
  if (::inet_pton(AF_INET, text.c_str(), bytes) != 1) {
    family = AF_INET6;
    if (::inet_pton(AF_INET6, text.c_str(), bytes) != 1) {
      if (check == AddressCheck::kLenient) return Status::Ok();
      return InvalidArgumentError(
          fmt::format("{}: value \"{}\" is not an IPv4 or IPv6 address", source, text));
    }
  }
  if (family == AF_INET && bytes[0] == 169 && bytes[1] == 254) return Status::Ok();
  if (family == AF_INET6 && bytes[0] == 0xfe && (bytes[1] & 0xc0) == 0x80) return Status::Ok();
  char canonical[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(family, bytes, canonical, sizeof(canonical));
  std::vector<std::string>& list = family == AF_INET ? nic.ipv4 : nic.ipv6;
  if (std::find(list.begin(), list.end(), canonical) == list.end()) list.emplace_back(canonical);
  return Status::Ok();
}

// Speed as the kernel prints it in class/net/<nic>/speed (Mb/s, -1 for unknown). A file
// that cannot be read (EINVAL while the link is down) is unknown; one that reads but does
// not parse is an error.
Status ReadSpeed(const std::string& nic_dir, const DiscoveryOptions& options, NicInfo& nic) {
  nic.speed_known = false;
  nic.speed_mbps = options.unknown_nic_speed_mbps;
  const std::string path = nic_dir + "/speed";
  auto text = sysfs::ReadValue(path);
  if (!text.ok()) return Status::Ok();
  QRM_ASSIGN_OR_RETURN(auto speed, sysfs::ParseInt(path, *text));
  if (speed > 0) {
    nic.speed_known = true;
    nic.speed_mbps = speed;
  }
  return Status::Ok();
}

StatusOr<std::string> OptionalText(const std::string& path) {
  auto text = sysfs::ReadOptionalValue(path);
  if (!text.ok()) {
    // Attributes some drivers refuse to print (EINVAL, EOPNOTSUPP) are simply absent.
    if (text.status().code() == StatusCode::kInternal) return std::string();
    return text.status();
  }
  return text->value_or("");
}

// Reads <root>/class/net: the real root namespace (root = sysfs_root) or a fake namespace
// directory. `real` takes addresses from getifaddrs (filled in by the caller) instead of the
// fixture file.
Status ReadSysfsNics(const std::string& root, const std::string& netns,
                     const std::string& netns_path, bool real, const DiscoveryOptions& options,
                     std::vector<RawNic>& out) {
  const std::string class_dir = root + "/class/net";
  QRM_ASSIGN_OR_RETURN(auto names, sysfs::ListDir(class_dir));
  for (const std::string& name : names) {
    const std::string dir = fmt::format("{}/{}", class_dir, name);
    // Skips plain files such as bonding_masters.
    if (name == "lo" || !sysfs::IsDirectory(dir)) continue;
    QRM_ASSIGN_OR_RETURN(auto type, OptionalText(dir + "/type"));
    if (type == std::to_string(ARPHRD_LOOPBACK)) continue;

    RawNic raw;
    NicInfo& nic = raw.info;
    nic.name = name;
    nic.netns = netns;
    nic.netns_path = netns_path;
    nic.is_virtual = !sysfs::Exists(dir + "/device");
    if (nic.is_virtual && !options.include_virtual_nics) continue;

    auto ifindex = OptionalText(dir + "/ifindex");
    if (!ifindex.ok()) return ifindex.status();
    if (!ifindex->empty()) {
      QRM_ASSIGN_OR_RETURN(auto value, sysfs::ParseInt(dir + "/ifindex", *ifindex));
      nic.ifindex = static_cast<int>(value);
    }
    if (!nic.is_virtual) {
      raw.numa_source = dir + "/device/numa_node";
      QRM_ASSIGN_OR_RETURN(auto node, OptionalText(raw.numa_source));
      if (!node.empty()) {
        QRM_ASSIGN_OR_RETURN(auto value, sysfs::ParseInt(raw.numa_source, node));
        raw.numa_node = value;
      }
    }
    QRM_RETURN_IF_ERROR(ReadSpeed(dir, options, nic));
    auto operstate = OptionalText(dir + "/operstate");
    if (!operstate.ok()) return operstate.status();
    nic.operstate = *operstate;
    auto mac = OptionalText(dir + "/address");
    if (!mac.ok()) return mac.status();
    nic.mac = *mac;

    if (!real) {
      const std::string path = dir + "/" + kFakeAddressesFile;
      QRM_ASSIGN_OR_RETURN(auto content, sysfs::ReadOptionalValue(path));
      std::istringstream lines(content.value_or(""));
      for (std::string line; std::getline(lines, line);) {
        line.erase(0, line.find_first_not_of(" \t"));
        line.erase(line.find_last_not_of(" \t\r") + 1);
        if (line.empty() || line[0] == '#') continue;
        QRM_RETURN_IF_ERROR(AddAddress(nic, line, path, AddressCheck::kStrict));
      }
    }
    out.push_back(std::move(raw));
  }
  return Status::Ok();
}

// Addresses of the calling thread's namespace, by interface name.
Status AddIfaddrs(std::vector<RawNic>& nics) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return ErrnoError(errno, "getifaddrs", "root namespace");
  for (const ifaddrs* ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || ifa->ifa_name == nullptr) continue;
    const int family = ifa->ifa_addr->sa_family;
    const void* addr = nullptr;
    if (family == AF_INET) {
      addr = &reinterpret_cast<const sockaddr_in*>(ifa->ifa_addr)->sin_addr;
    } else if (family == AF_INET6) {
      addr = &reinterpret_cast<const sockaddr_in6*>(ifa->ifa_addr)->sin6_addr;
    } else {
      continue;
    }
    char text[INET6_ADDRSTRLEN] = {};
    if (::inet_ntop(family, addr, text, sizeof(text)) == nullptr) continue;
    for (RawNic& raw : nics) {
      if (raw.info.name == ifa->ifa_name) {
        (void)AddAddress(raw.info, text, "getifaddrs", AddressCheck::kLenient);
      }
    }
  }
  ::freeifaddrs(list);
  return Status::Ok();
}

// NICs of the namespace at `path`, read over netlink from a thread that joined it. A
// namespace that cannot be entered sets `enter_failure` (the caller skips it); anything
// failing after that is the returned error.
Status ReadNetlinkNics(const std::string& netns, const std::string& path,
                       const DiscoveryOptions& options, std::vector<RawNic>& out,
                       Status& enter_failure) {
  struct Entry {
    netlink::Link link;
    std::optional<int64_t> speed;
  };
  std::vector<Entry> entries;
  std::vector<netlink::Address> addresses;
  Status inside;
  Status entered = netlink::RunInNetns(path, [&]() -> Status {
    auto links = netlink::ListLinks();
    if (!links.ok()) {
      inside = links.status().WithContext(fmt::format("network namespace {}", path));
      return Status::Ok();
    }
    auto addrs = netlink::ListAddresses();
    if (!addrs.ok()) {
      inside = addrs.status().WithContext(fmt::format("network namespace {}", path));
      return Status::Ok();
    }
    addresses = std::move(*addrs);
    for (netlink::Link& link : *links) {
      Entry entry;
      entry.speed = netlink::EthtoolSpeedMbps(link.name);
      entry.link = std::move(link);
      entries.push_back(std::move(entry));
    }
    return Status::Ok();
  });
  if (!entered.ok()) {
    enter_failure = entered;
    return Status::Ok();
  }
  QRM_RETURN_IF_ERROR(inside);

  std::vector<RawNic> found;
  for (const Entry& entry : entries) {
    const netlink::Link& link = entry.link;
    if (link.type == ARPHRD_LOOPBACK || link.name == "lo") continue;
    RawNic raw;
    NicInfo& nic = raw.info;
    nic.name = link.name;
    nic.netns = netns;
    nic.netns_path = path;
    nic.ifindex = link.ifindex;
    nic.mac = link.mac;
    nic.operstate = link.operstate;
    const bool physical =
        !link.parent_dev.empty() || (link.kind.empty() && link.type == ARPHRD_ETHER);
    nic.is_virtual = !physical;
    if (nic.is_virtual && !options.include_virtual_nics) continue;
    nic.speed_known = entry.speed.has_value();
    nic.speed_mbps = entry.speed.value_or(options.unknown_nic_speed_mbps);
    if (!link.parent_dev.empty() && !link.parent_bus.empty()) {
      // /sys/bus is not filtered by network namespace, unlike /sys/class/net.
      raw.numa_source = fmt::format("{}/bus/{}/devices/{}/numa_node", options.sysfs_root,
                                    link.parent_bus, link.parent_dev);
      QRM_ASSIGN_OR_RETURN(auto node, OptionalText(raw.numa_source));
      if (!node.empty()) {
        QRM_ASSIGN_OR_RETURN(auto value, sysfs::ParseInt(raw.numa_source, node));
        raw.numa_node = value;
      }
    }
    for (const netlink::Address& addr : addresses) {
      if (addr.ifindex == link.ifindex) {
        (void)AddAddress(nic, addr.address, "netlink", AddressCheck::kLenient);
      }
    }
    found.push_back(std::move(raw));
  }
  std::sort(found.begin(), found.end(),
            [](const RawNic& a, const RawNic& b) { return a.info.name < b.info.name; });
  for (RawNic& raw : found) out.push_back(std::move(raw));
  return Status::Ok();
}

void ResolveNode(RawNic& raw, MachineTopology& topo) {
  NicInfo& nic = raw.info;
  const bool single = topo.nodes.size() == 1;
  if (raw.numa_node.has_value() && *raw.numa_node >= 0) {
    if (*raw.numa_node < NumaMask::kMaxNodes &&
        topo.Node(static_cast<int>(*raw.numa_node)) != nullptr) {
      nic.numa_node = static_cast<int>(*raw.numa_node);
      return;
    }
    topo.warnings.push_back(
        fmt::format("nic {}{}: {} names NUMA node {}, which is not online; reported as {}",
                    nic.name, nic.netns.empty() ? "" : " (netns " + nic.netns + ")",
                    raw.numa_source, *raw.numa_node, single ? "node 0" : "unknown (-1)"));
  }
  nic.numa_node = single ? topo.nodes[0].id : -1;
}

}  // namespace

Status DiscoverNics(const DiscoveryOptions& options, MachineTopology& topo) {
  const bool real = IsRealSysfs(options);
  std::vector<RawNic> nics;
  QRM_RETURN_IF_ERROR(ReadSysfsNics(options.sysfs_root, "", "", real, options, nics));
  if (real) QRM_RETURN_IF_ERROR(AddIfaddrs(nics));

  // A netns directory we cannot list costs the namespaced NICs, not the whole discovery.
  auto namespaces = sysfs::ListDir(options.netns_dir);
  if (!namespaces.ok()) {
    topo.warnings.push_back(
        fmt::format("network namespaces not listed: {}", namespaces.status().message()));
    namespaces = std::vector<std::string>();
  }
  for (const std::string& ns : *namespaces) {
    const std::string path = options.netns_dir + "/" + ns;
    if (!real) {
      if (!sysfs::IsDirectory(path)) {
        topo.warnings.push_back(
            fmt::format("netns {}: not a fake namespace directory; skipped", path));
        continue;
      }
      QRM_RETURN_IF_ERROR(ReadSysfsNics(path, ns, path, false, options, nics));
      continue;
    }
    auto own = netlink::IsOwnNetns(path);
    if (own.ok() && *own) {
      topo.warnings.push_back(fmt::format(
          "netns {} is the agent's own network namespace; its NICs are listed once, as root "
          "namespace NICs",
          path));
      continue;
    }
    Status enter_failure;
    QRM_RETURN_IF_ERROR(ReadNetlinkNics(ns, path, options, nics, enter_failure));
    if (!enter_failure.ok()) {
      topo.warnings.push_back(fmt::format("netns {} skipped: {}", path, enter_failure.message()));
    }
  }

  for (RawNic& raw : nics) {
    ResolveNode(raw, topo);
    topo.nics.push_back(std::move(raw.info));
  }
  return Status::Ok();
}

}  // namespace qrm::machine
