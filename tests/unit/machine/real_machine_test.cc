// Discovery of THIS machine (no root override), cross-checked with sysconf, libnuma and
// /sys; the netlink reader against sysfs; and, when running as root, a real network
// namespace with a veth pair read through setns + netlink.
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include <catch2/catch.hpp>
#include <linux/if_arp.h>
#include <numa.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "machine/discovery.h"
#include "machine/netlink.h"
#include "machine/sysfs.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "tests/unit/machine/machine_test_util.h"

namespace qrm::machine {
namespace {

namespace fs = std::filesystem;
using Catch::Contains;
using testing::TempDir;
using testutil::DiscoverOk;

TEST_CASE("this machine: CPUs agree with sysconf and memory with libnuma", "[machine][real]") {
  const MachineTopology topo = DiscoverOk({});
  INFO(topo.Describe());
  WARN("this machine:\n" << topo.Describe());

  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  CHECK(topo.NumCpus() == online);
  CHECK(static_cast<unsigned>(topo.NumCpus()) == std::thread::hardware_concurrency());
  auto sysfs_online = sysfs::ReadCpuList("/sys/devices/system/cpu/online");
  REQUIRE(sysfs_online.ok());
  CHECK(topo.OnlineCpus() == *sysfs_online);

  // Every CPU is on exactly one node, in exactly one core and one socket.
  CpuSet from_nodes;
  for (const NumaNodeInfo& node : topo.nodes) {
    CHECK_FALSE(from_nodes.Overlaps(node.cpus));
    from_nodes = from_nodes.Union(node.cpus);
  }
  CHECK(from_nodes == topo.OnlineCpus());
  int threads = 0;
  for (const Core& core : topo.Cores()) threads += core.threads.Size();
  CHECK(threads == topo.NumCpus());
  CHECK(topo.ThreadsPerCore() >= 1);
  for (const CpuInfo& cpu : topo.cpus) CHECK(cpu.thread_siblings.Contains(cpu.id));

  if (numa_available() < 0) {
    CHECK(topo.NumNodes() == 1);
  } else {
    int with_memory = 0;
    for (const NumaNodeInfo& node : topo.nodes) {
      if (node.memory_total_bytes > 0) ++with_memory;
      long long free_bytes = 0;
      const long long total = numa_node_size64(node.id, &free_bytes);
      INFO("node " << node.id << ": libnuma " << total << ", discovered "
                   << node.memory_total_bytes);
      REQUIRE(total > 0);
      CHECK(std::fabs(static_cast<double>(total) - static_cast<double>(node.memory_total_bytes)) <=
            0.01 * static_cast<double>(total));
      CHECK(node.distances.at(node.id) == numa_distance(node.id, node.id));
    }
    CHECK(numa_num_configured_nodes() == with_memory);
    CHECK(topo.NumNodes() >= numa_num_configured_nodes());
  }
  CHECK(topo.NodeMask().Count() == topo.NumNodes());

  // Root-namespace NICs are real interfaces, never lo.
  for (const NicInfo& nic : topo.nics) {
    if (!nic.netns.empty()) continue;
    INFO(nic.name);
    CHECK(nic.name != "lo");
    CHECK(fs::exists("/sys/class/net/" + nic.name));
    CHECK_FALSE(nic.is_virtual);
    if (topo.NumNodes() == 1) CHECK(nic.numa_node == topo.nodes[0].id);
  }
}

TEST_CASE("netlink sees what /sys/class/net shows for our own namespace", "[machine][real]") {
  auto links = netlink::ListLinks();
  INFO(links.status().ToString());
  REQUIRE(links.ok());
  std::set<std::string> from_netlink;
  for (const netlink::Link& link : *links) {
    from_netlink.insert(link.name);
    const std::string dir = "/sys/class/net/" + link.name;
    if (!fs::exists(dir)) continue;  // sysfs mounted from another namespace
    INFO(link.name);
    auto ifindex = sysfs::ReadInt(dir + "/ifindex");
    REQUIRE(ifindex.ok());
    CHECK(link.ifindex == *ifindex);
    auto mac = sysfs::ReadValue(dir + "/address");
    if (mac.ok()) CHECK(link.mac == *mac);
    auto operstate = sysfs::ReadValue(dir + "/operstate");
    if (operstate.ok()) CHECK(link.operstate == *operstate);
    if (link.name == "lo") CHECK(link.type == ARPHRD_LOOPBACK);
    // Physical devices: the parent netlink reports is the device sysfs links to.
    std::error_code ec;
    const fs::path device = fs::read_symlink(dir + "/device", ec);
    if (!ec && !link.parent_dev.empty()) CHECK(link.parent_dev == device.filename().string());
  }
  CHECK(from_netlink.count("lo") == 1);

  auto addresses = netlink::ListAddresses();
  INFO(addresses.status().ToString());
  REQUIRE(addresses.ok());
  bool loopback = false;
  for (const netlink::Address& a : *addresses) {
    if (a.address == "127.0.0.1") loopback = true;
  }
  CHECK(loopback);
}

// Holds a fresh network namespace with a veth pair on a thread of its own, so the test can
// point discovery at it through /proc/<pid>/task/<tid>/ns/net without mounting anything.
class ScratchNetns {
 public:
  ScratchNetns() {
    thread_ = std::thread([this] {
      std::string error;
      if (::unshare(CLONE_NEWNET) != 0) {
        error = std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno);
      } else {
        for (const std::vector<std::string>& argv : std::vector<std::vector<std::string>>{
                 {"ip", "link", "add", "v0", "type", "veth", "peer", "name", "v1"},
                 {"ip", "addr", "add", "10.99.0.1/24", "dev", "v0"},
                 {"ip", "-6", "addr", "add", "fd00:99::1/64", "dev", "v0", "nodad"},
                 {"ip", "link", "set", "v1", "up"},
                 {"ip", "link", "set", "v0", "up"}}) {
          const auto result = testing::RunProcess(argv);
          if (result.exit_code != 0) {
            error = "ip failed: " + result.output;
            break;
          }
        }
      }
      std::unique_lock lock(mu_);
      tid_ = static_cast<pid_t>(::syscall(SYS_gettid));
      error_ = error;
      ready_ = true;
      cv_.notify_all();
      cv_.wait(lock, [this] { return done_; });
    });
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return ready_; });
  }
  ~ScratchNetns() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  const std::string& error() const { return error_; }
  std::string NsPath() const {
    return "/proc/" + std::to_string(::getpid()) + "/task/" + std::to_string(tid_) + "/ns/net";
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool ready_ = false;
  bool done_ = false;
  pid_t tid_ = 0;
  std::string error_;
  std::thread thread_;
};

TEST_CASE("a real network namespace is read through setns and netlink", "[machine][real]") {
  if (::geteuid() != 0 || testing::FindExecutable("ip").empty()) {
    WARN("skipped: needs root and iproute2");
    return;
  }
  ScratchNetns ns;
  if (!ns.error().empty()) {
    WARN("skipped: cannot build a scratch namespace: " << ns.error());
    return;
  }
  TempDir dir;
  fs::create_symlink(ns.NsPath(), dir.File("ns1"));
  fs::create_symlink("/proc/self/ns/net", dir.File("self"));
  testing::WriteFile(dir.File("stale"), "");  // `ip netns add` leftovers look like this

  DiscoveryOptions options;
  options.netns_dir = dir.path();
  options.unknown_nic_speed_mbps = 777;

  SECTION("virtual NICs on request") {
    options.include_virtual_nics = true;
    const MachineTopology topo = DiscoverOk(options);
    INFO(topo.Describe());
    const NicInfo* v0 = topo.Nic("v0", "ns1");
    const NicInfo* v1 = topo.Nic("v1", "ns1");
    REQUIRE(v0 != nullptr);
    REQUIRE(v1 != nullptr);
    CHECK(topo.Nic("lo", "ns1") == nullptr);
    CHECK(v0->netns_path == dir.File("ns1"));
    CHECK(v0->is_virtual);
    CHECK(v0->ifindex > 0);
    CHECK(v0->mac.size() == 17);
    CHECK(v0->ipv4 == std::vector<std::string>{"10.99.0.1"});
    CHECK(v0->ipv6 == std::vector<std::string>{"fd00:99::1"});  // fe80:: is dropped
    CHECK(v1->ipv4.empty());
    // veth reports 10000 Mb/s through ethtool.
    CHECK(v0->speed_known);
    CHECK(v0->speed_mbps == 10000);
    CHECK(v0->numa_node == (topo.NumNodes() == 1 ? topo.nodes[0].id : -1));
    // Neither the stale file nor our own namespace is read; both are warnings.
    for (const NicInfo& nic : topo.nics) CHECK((nic.netns == "" || nic.netns == "ns1"));
    CHECK_THAT(topo.Describe(), Contains("netns " + dir.File("self") + " is the agent's own"));
    CHECK_THAT(topo.Describe(), Contains("netns " + dir.File("stale") + " skipped"));
  }
  SECTION("physical NICs only by default") {
    const MachineTopology topo = DiscoverOk(options);
    for (const NicInfo& nic : topo.nics) CHECK(nic.netns != "ns1");
  }
}

TEST_CASE("RunInNetns reports namespaces it cannot enter", "[machine][real]") {
  TempDir dir;
  testing::WriteFile(dir.File("plain"), "");
  bool ran = false;
  Status status = netlink::RunInNetns(dir.File("plain"), [&] {
    ran = true;
    return Status::Ok();
  });
  CHECK_FALSE(ran);
  CHECK_FALSE(status.ok());
  CHECK_THAT(status.message(), Contains(dir.File("plain")));
  status = netlink::RunInNetns(dir.File("missing"), [] { return Status::Ok(); });
  CHECK(status.code() == StatusCode::kNotFound);
  CHECK_THAT(status.message(), Contains(dir.File("missing")));
}

}  // namespace
}  // namespace qrm::machine
