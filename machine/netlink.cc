#include "machine/netlink.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <exception>
#include <thread>

// glibc's <net/if.h> must precede the <linux/...> headers, which then skip their copies.
#include <net/if.h>
// clang-format keeps the block above first.
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/ethtool.h>
#include <linux/if_arp.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/errno_text.h"

namespace qrm::machine::netlink {

namespace {

// NLMSG_OK(nh, len) without its signed/unsigned comparison, which clang reports
// (-Wsign-compare) inside the macro where GCC does not. len >= the header size is checked
// first, so the unsigned comparison of the lengths is exact.
bool MessageFits(const nlmsghdr* nh, int len) {
  return len >= static_cast<int>(sizeof(nlmsghdr)) && nh->nlmsg_len >= sizeof(nlmsghdr) &&
         nh->nlmsg_len <= static_cast<unsigned>(len);
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string OperStateName(uint8_t state) {
  // The words /sys/class/net/<nic>/operstate prints (RFC 2863 states, linux/if.h order).
  static constexpr std::array<const char*, 7> kNames = {
      "unknown", "notpresent", "down", "lowerlayerdown", "testing", "dormant", "up"};
  return state < kNames.size() ? kNames[state] : "unknown";
}

std::string HexBytes(const unsigned char* data, size_t len) {
  std::string out;
  for (size_t i = 0; i < len; ++i) {
    if (i > 0) out += ':';
    out += fmt::format("{:02x}", data[i]);
  }
  return out;
}

std::string AttrString(const rtattr* attr) {
  const char* data = static_cast<const char*>(RTA_DATA(attr));
  const size_t len = RTA_PAYLOAD(attr);
  return std::string(data, strnlen(data, len));
}

// Sends one dump request and feeds every answer message to `on_message`. A dump the kernel
// marks as interrupted (NLM_F_DUMP_INTR: the table changed meanwhile) is retried.
Status Dump(uint16_t type, const void* body, size_t body_len, const char* what,
            const std::function<Status(const nlmsghdr*)>& on_message) {
  constexpr int kAttempts = 5;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    Fd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
    if (fd.get() < 0) return ErrnoError(errno, "open netlink socket for", what);
    sockaddr_nl local{};
    local.nl_family = AF_NETLINK;
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) {
      return ErrnoError(errno, "bind netlink socket for", what);
    }

    alignas(nlmsghdr) char request[NLMSG_SPACE(64)] = {};
    auto* hdr = reinterpret_cast<nlmsghdr*>(request);
    hdr->nlmsg_len = NLMSG_LENGTH(body_len);
    hdr->nlmsg_type = type;
    hdr->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    hdr->nlmsg_seq = static_cast<uint32_t>(attempt + 1);
    std::memcpy(NLMSG_DATA(hdr), body, body_len);
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (::sendto(fd.get(), request, hdr->nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel),
                 sizeof(kernel)) < 0) {
      return ErrnoError(errno, "send netlink request for", what);
    }

    std::vector<char> buf(64 * 1024);
    bool done = false;
    bool interrupted = false;
    while (!done) {
      iovec iov{buf.data(), buf.size()};
      msghdr msg{};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      const ssize_t n = ::recvmsg(fd.get(), &msg, 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoError(errno, "receive netlink answer for", what);
      }
      if ((msg.msg_flags & MSG_TRUNC) != 0) {
        return InternalError(fmt::format("netlink answer for {} truncated", what));
      }
      int len = static_cast<int>(n);
      for (auto* nh = reinterpret_cast<const nlmsghdr*>(buf.data()); MessageFits(nh, len);
           nh = NLMSG_NEXT(nh, len)) {
        if (nh->nlmsg_seq != hdr->nlmsg_seq) continue;
        if ((nh->nlmsg_flags & NLM_F_DUMP_INTR) != 0) interrupted = true;
        if (nh->nlmsg_type == NLMSG_DONE) {
          done = true;
          break;
        }
        if (nh->nlmsg_type == NLMSG_ERROR) {
          const auto* err = static_cast<const nlmsgerr*>(NLMSG_DATA(nh));
          if (err->error == 0) continue;
          return ErrnoError(-err->error, "netlink dump of", what);
        }
        if (!interrupted) QRM_RETURN_IF_ERROR(on_message(nh));
      }
      if (n == 0) break;
    }
    if (!interrupted) return Status::Ok();
  }
  return UnavailableError(
      fmt::format("netlink dump of {} kept changing during {} attempts", what, kAttempts));
}

}  // namespace

StatusOr<std::vector<Link>> ListLinks() {
  std::vector<Link> links;
  ifinfomsg req{};
  req.ifi_family = AF_UNSPEC;
  auto on_message = [&](const nlmsghdr* nh) -> Status {
    if (nh->nlmsg_type != RTM_NEWLINK) return Status::Ok();
    const auto* ifi = static_cast<const ifinfomsg*>(NLMSG_DATA(nh));
    Link link;
    link.ifindex = ifi->ifi_index;
    link.type = ifi->ifi_type;
    link.flags = ifi->ifi_flags;
    int len = static_cast<int>(IFLA_PAYLOAD(nh));
    for (auto* attr = IFLA_RTA(ifi); RTA_OK(attr, len); attr = RTA_NEXT(attr, len)) {
      switch (attr->rta_type) {
        case IFLA_IFNAME: link.name = AttrString(attr); break;
        case IFLA_ADDRESS:
          link.mac = HexBytes(static_cast<const unsigned char*>(RTA_DATA(attr)), RTA_PAYLOAD(attr));
          break;
        case IFLA_OPERSTATE:
          if (RTA_PAYLOAD(attr) >= 1) {
            link.operstate = OperStateName(*static_cast<const uint8_t*>(RTA_DATA(attr)));
          }
          break;
        case IFLA_LINKINFO: {
          int nested_len = static_cast<int>(RTA_PAYLOAD(attr));
          for (auto* info = static_cast<const rtattr*>(RTA_DATA(attr)); RTA_OK(info, nested_len);
               info = RTA_NEXT(info, nested_len)) {
            if (info->rta_type == IFLA_INFO_KIND) link.kind = AttrString(info);
          }
          break;
        }
        case IFLA_PARENT_DEV_NAME: link.parent_dev = AttrString(attr); break;
        case IFLA_PARENT_DEV_BUS_NAME: link.parent_bus = AttrString(attr); break;
        default: break;
      }
    }
    links.push_back(std::move(link));
    return Status::Ok();
  };
  QRM_RETURN_IF_ERROR(Dump(RTM_GETLINK, &req, sizeof(req), "links", on_message));
  return links;
}

StatusOr<std::vector<Address>> ListAddresses() {
  std::vector<Address> addresses;
  ifaddrmsg req{};
  req.ifa_family = AF_UNSPEC;
  auto on_message = [&](const nlmsghdr* nh) -> Status {
    if (nh->nlmsg_type != RTM_NEWADDR) return Status::Ok();
    const auto* ifa = static_cast<const ifaddrmsg*>(NLMSG_DATA(nh));
    if (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6) return Status::Ok();
    const rtattr* local = nullptr;
    const rtattr* address = nullptr;
    int len = static_cast<int>(IFA_PAYLOAD(nh));
    for (auto* attr = IFA_RTA(ifa); RTA_OK(attr, len); attr = RTA_NEXT(attr, len)) {
      if (attr->rta_type == IFA_LOCAL) local = attr;
      if (attr->rta_type == IFA_ADDRESS) address = attr;
    }
    // For IPv4, IFA_LOCAL is the interface's own address (IFA_ADDRESS is the peer on
    // point-to-point links); IPv6 only sends IFA_ADDRESS (or IFA_LOCAL for p2p).
    const rtattr* chosen = ifa->ifa_family == AF_INET && local != nullptr ? local
                           : address != nullptr                           ? address
                                                                          : local;
    if (chosen == nullptr) return Status::Ok();
    const size_t want = ifa->ifa_family == AF_INET ? 4 : 16;
    if (RTA_PAYLOAD(chosen) < want) return Status::Ok();
    char text[INET6_ADDRSTRLEN] = {};
    if (::inet_ntop(ifa->ifa_family, RTA_DATA(chosen), text, sizeof(text)) == nullptr) {
      return Status::Ok();
    }
    addresses.push_back(Address{static_cast<int>(ifa->ifa_index), ifa->ifa_family, text,
                                static_cast<int>(ifa->ifa_scope)});
    return Status::Ok();
  };
  QRM_RETURN_IF_ERROR(Dump(RTM_GETADDR, &req, sizeof(req), "addresses", on_message));
  return addresses;
}

std::optional<int64_t> EthtoolSpeedMbps(const std::string& ifname) {
  if (ifname.empty() || ifname.size() >= IFNAMSIZ) return std::nullopt;
  Fd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return std::nullopt;
  ethtool_cmd cmd{};
  cmd.cmd = ETHTOOL_GSET;
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, ifname.c_str(), ifname.size());
  ifr.ifr_data = reinterpret_cast<char*>(&cmd);
  if (::ioctl(fd.get(), SIOCETHTOOL, &ifr) != 0) return std::nullopt;
  const uint32_t speed = ethtool_cmd_speed(&cmd);
  if (speed == 0 || speed == static_cast<uint32_t>(SPEED_UNKNOWN)) return std::nullopt;
  return static_cast<int64_t>(speed);
}

StatusOr<bool> IsOwnNetns(const std::string& netns_path) {
  struct stat own {};
  if (::stat("/proc/thread-self/ns/net", &own) != 0) {
    return ErrnoError(errno, "stat", "/proc/thread-self/ns/net");
  }
  struct stat other {};
  if (::stat(netns_path.c_str(), &other) != 0) return ErrnoError(errno, "stat", netns_path);
  return own.st_dev == other.st_dev && own.st_ino == other.st_ino;
}

Status RunInNetns(const std::string& netns_path, const std::function<Status()>& fn) {
  Status result;
  auto body = [&] {
    const int fd = ::open(netns_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      result = ErrnoError(errno, "open network namespace", netns_path);
      return;
    }
    const int rc = ::setns(fd, CLONE_NEWNET);
    const int err = errno;
    ::close(fd);
    if (rc != 0) {
      if (err == EINVAL) {
        result = FailedPreconditionError(
            fmt::format("{} is not a network namespace (setns: {})", netns_path, ErrnoText(err)));
      } else {
        result = ErrnoError(err, "enter network namespace", netns_path);
      }
      return;
    }
    result = fn();
  };
  try {
    std::thread worker(body);
    worker.join();
  } catch (const std::exception& e) {
    return InternalError(
        fmt::format("cannot start a thread to enter {}: {}", netns_path, e.what()));
  }
  return result;
}

}  // namespace qrm::machine::netlink
