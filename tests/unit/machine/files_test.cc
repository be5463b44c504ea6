// Malformed files fail discovery with a message naming the file and the value; missing
// optional files are tolerated; unknown NIC speeds become the configured value.
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "machine/discovery.h"
#include "testing/machine/fake_machine.h"
#include "testing/temp_dir.h"
#include "tests/unit/machine/machine_test_util.h"

namespace qrm::machine {
namespace {

namespace fs = std::filesystem;
using Catch::Contains;
using testing::TempDir;
using testing::WriteFile;
using testutil::DiscoverFails;
using testutil::DiscoverOk;
using testutil::Generate;

// The document's machine shrunk to 4 cpus per node (node 0 = 0-3, node 1 = 4-7), NICs
// unchanged: same layout, far fewer files to write on slow disks.
fake::FakeMachineShape SmallDoc() {
  auto shape = fake::Doc80Shape();
  for (auto& node : shape.nodes) node.cpus = 4;
  return shape;
}

struct SmallMachine {
  TempDir dir;
  fake::FakeMachinePaths paths = Generate(SmallDoc(), dir);
  std::string Sys(const std::string& rel) const { return paths.sysfs_root + "/" + rel; }
  void Remove(const std::string& path) const {
    std::error_code ec;
    REQUIRE(fs::remove_all(path, ec) > 0);
  }
};

// The failure names the file and contains the offending value.
void ExpectFailure(const SmallMachine& m, const std::string& file, const std::string& value,
                   StatusCode code = StatusCode::kInvalidArgument) {
  const Status status = DiscoverFails(m.paths.Options());
  INFO(status.ToString());
  CHECK(status.code() == code);
  CHECK_THAT(status.message(), Contains(file));
  CHECK_THAT(status.message(), Contains(value));
}

TEST_CASE("malformed cpu and node lists name the file and the value", "[machine][files]") {
  SECTION("cpu/online") {
    SmallMachine m;
    WriteFile(m.Sys("devices/system/cpu/online"), "0-x\n");
    ExpectFailure(m, m.Sys("devices/system/cpu/online"), "\"0-x\"");
  }
  SECTION("node cpulist") {
    SmallMachine m;
    WriteFile(m.Sys("devices/system/node/node1/cpulist"), "4-x\n");
    ExpectFailure(m, m.Sys("devices/system/node/node1/cpulist"), "\"4-x\"");
  }
  SECTION("node online") {
    SmallMachine m;
    WriteFile(m.Sys("devices/system/node/online"), "0-1,\n");
    ExpectFailure(m, m.Sys("devices/system/node/online"), "\"0-1,\"");
  }
  SECTION("node ids above 63") {
    SmallMachine m;
    WriteFile(m.Sys("devices/system/node/online"), "0-99\n");
    ExpectFailure(m, m.Sys("devices/system/node/online"), "\"0-99\"");
  }
  SECTION("thread siblings") {
    SmallMachine m;
    WriteFile(m.Sys("devices/system/cpu/cpu7/topology/thread_siblings_list"), "6-\n");
    ExpectFailure(m, m.Sys("devices/system/cpu/cpu7/topology/thread_siblings_list"), "\"6-\"");
  }
  SECTION("thread siblings without the cpu itself") {
    SmallMachine m;
    WriteFile(m.Sys("devices/system/cpu/cpu7/topology/thread_siblings_list"), "8-9\n");
    ExpectFailure(m, m.Sys("devices/system/cpu/cpu7/topology/thread_siblings_list"),
                  "\"8-9\" does not contain cpu 7");
  }
}

TEST_CASE("malformed numbers name the file and the value", "[machine][files]") {
  SECTION("core_id") {
    SmallMachine m;
    WriteFile(m.Sys("devices/system/cpu/cpu3/topology/core_id"), "abc\n");
    ExpectFailure(m, m.Sys("devices/system/cpu/cpu3/topology/core_id"), "\"abc\"");
  }
  SECTION("physical_package_id") {
    SmallMachine m;
    WriteFile(m.Sys("devices/system/cpu/cpu3/topology/physical_package_id"), "0x1\n");
    ExpectFailure(m, m.Sys("devices/system/cpu/cpu3/topology/physical_package_id"), "\"0x1\"");
  }
  SECTION("die_id") {
    SmallMachine m;
    WriteFile(m.Sys("devices/system/cpu/cpu3/topology/die_id"), "-5\n");
    ExpectFailure(m, m.Sys("devices/system/cpu/cpu3/topology/die_id"), "\"-5\"");
  }
  SECTION("node meminfo") {
    SmallMachine m;
    WriteFile(m.Sys("devices/system/node/node0/meminfo"), "Node 0 MemTotal:  lots kB\n");
    ExpectFailure(m, m.Sys("devices/system/node/node0/meminfo"), "\"lots\"");
  }
  SECTION("node meminfo without MemTotal") {
    SmallMachine m;
    WriteFile(m.Sys("devices/system/node/node0/meminfo"), "Node 0 MemFree:  1 kB\n");
    ExpectFailure(m, m.Sys("devices/system/node/node0/meminfo"), "no MemTotal");
  }
  SECTION("distance") {
    SmallMachine m;
    WriteFile(m.Sys("devices/system/node/node1/distance"), "21 x\n");
    ExpectFailure(m, m.Sys("devices/system/node/node1/distance"), "\"x\"");
  }
  SECTION("distance count") {
    SmallMachine m;
    WriteFile(m.Sys("devices/system/node/node1/distance"), "21 10 20\n");
    ExpectFailure(m, m.Sys("devices/system/node/node1/distance"), "\"21 10 20\" has 3");
  }
  SECTION("hugepages") {
    SmallMachine m;
    WriteFile(m.Sys("devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages"), "-1\n");
    ExpectFailure(m, m.Sys("devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages"),
                  "\"-1\"");
  }
  SECTION("NIC speed") {
    SmallMachine m;
    WriteFile(m.Sys("class/net/eth0/speed"), "fast\n");
    ExpectFailure(m, m.Sys("class/net/eth0/speed"), "\"fast\"");
  }
  SECTION("NIC numa_node") {
    SmallMachine m;
    WriteFile(m.Sys("class/net/eth0/device/numa_node"), "zero\n");
    ExpectFailure(m, m.Sys("class/net/eth0/device/numa_node"), "\"zero\"");
  }
  SECTION("fake addresses") {
    SmallMachine m;
    const std::string file = m.paths.netns_dir + "/ns1/class/net/eth1/qrm_fake_addresses";
    WriteFile(file, "10.0.1.10\n10.0.1.300\n");
    ExpectFailure(m, file, "\"10.0.1.300\"");
  }
}

TEST_CASE("missing required files are errors naming the file", "[machine][files]") {
  SECTION("cpu/online") {
    SmallMachine m;
    m.Remove(m.Sys("devices/system/cpu/online"));
    ExpectFailure(m, m.Sys("devices/system/cpu/online"), "No such file", StatusCode::kNotFound);
  }
  SECTION("core_id") {
    SmallMachine m;
    m.Remove(m.Sys("devices/system/cpu/cpu6/topology/core_id"));
    ExpectFailure(m, m.Sys("devices/system/cpu/cpu6/topology/core_id"), "No such file",
                  StatusCode::kNotFound);
  }
  SECTION("node meminfo") {
    SmallMachine m;
    m.Remove(m.Sys("devices/system/node/node1/meminfo"));
    ExpectFailure(m, m.Sys("devices/system/node/node1/meminfo"), "No such file",
                  StatusCode::kNotFound);
  }
  SECTION("a listed node without its directory") {
    SmallMachine m;
    m.Remove(m.Sys("devices/system/node/node1"));
    ExpectFailure(m, m.Sys("devices/system/node/node1/cpulist"), "No such file",
                  StatusCode::kNotFound);
  }
}

TEST_CASE("CPUs in no node's cpulist", "[machine][files]") {
  SECTION("several nodes: an error naming the cpu") {
    SmallMachine m;
    WriteFile(m.Sys("devices/system/node/node1/cpulist"), "4-6\n");
    ExpectFailure(m, "cpu 7 ", "in no NUMA node");
  }
  SECTION("one node: node 0") {
    TempDir dir;
    const auto paths = Generate(fake::NoSmtShape(), dir);
    WriteFile(paths.sysfs_root + "/devices/system/node/node0/cpulist", "0-13\n");
    const MachineTopology topo = DiscoverOk(paths.Options());
    CHECK(topo.NodeCpus(0).ToString() == "0-15");
    CHECK(topo.NodeOfCpu(15) == 0);
  }
  SECTION("a cpu in two nodes") {
    SmallMachine m;
    WriteFile(m.Sys("devices/system/node/node1/cpulist"), "3-7\n");
    ExpectFailure(m, m.Sys("devices/system/node/node1/cpulist"), "repeats cpus 3 ");
  }
}

TEST_CASE("unknown NIC speeds become the configured value", "[machine][files]") {
  SmallMachine m;
  auto options = m.paths.Options();
  options.unknown_nic_speed_mbps = 1234;
  auto check = [&] {
    const MachineTopology topo = DiscoverOk(options);
    REQUIRE(topo.nics.size() == 2);
    for (const NicInfo& nic : topo.nics) {
      INFO(nic.name);
      CHECK(nic.speed_mbps == 1234);
      CHECK_FALSE(nic.speed_known);
    }
    CHECK_THAT(topo.Describe(), Contains("1234 Mb/s (unknown)"));
  };
  SECTION("-1 and 0") {
    WriteFile(m.Sys("class/net/eth0/speed"), "-1\n");
    WriteFile(m.paths.netns_dir + "/ns1/class/net/eth1/speed", "0\n");
    check();
  }
  SECTION("unreadable") {
    m.Remove(m.Sys("class/net/eth0/speed"));
    m.Remove(m.paths.netns_dir + "/ns1/class/net/eth1/speed");
    check();
  }
}

TEST_CASE("missing optional files are tolerated", "[machine][files]") {
  SmallMachine m;
  for (int cpu = 0; cpu < 8; ++cpu) {
    m.Remove(m.Sys("devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/die_id"));
  }
  m.Remove(m.Sys("devices/system/cpu/cpu5/topology/thread_siblings_list"));
  m.Remove(m.Sys("devices/system/node/node1/distance"));
  m.Remove(m.Sys("devices/system/node/node0/hugepages"));
  m.Remove(m.Sys("devices/system/node/online"));
  for (const char* file :
       {"speed", "operstate", "address", "ifindex", "qrm_fake_addresses", "device/numa_node"}) {
    m.Remove(m.Sys(std::string("class/net/eth0/") + file));
  }

  const MachineTopology topo = DiscoverOk(m.paths.Options());
  INFO(topo.Describe());
  CHECK(topo.NumCpus() == 8);
  CHECK(topo.Cpu(5)->die_id == 0);
  CHECK(topo.Cpu(5)->thread_siblings == CpuSet{4, 5});  // from the core's online threads
  CHECK(topo.Cores().size() == 4);
  CHECK(topo.NumNodes() == 2);  // from node/possible
  CHECK(topo.Distance(0, 1) == 21);
  CHECK_FALSE(topo.Distance(1, 0).has_value());  // no libnuma for fake roots
  CHECK(topo.Node(0)->hugepages.empty());
  CHECK(topo.Node(1)->hugepages.size() == 2);
  const NicInfo* eth0 = topo.Nic("eth0");
  REQUIRE(eth0 != nullptr);
  CHECK(eth0->numa_node == -1);
  CHECK(eth0->speed_mbps == 0);
  CHECK(eth0->operstate == "");
  CHECK(eth0->mac == "");
  CHECK(eth0->ifindex == 0);
  CHECK(eth0->ipv4.empty());
  CHECK(eth0->ipv6.empty());
}

TEST_CASE("node ids come from possible, then from the node directories", "[machine][files]") {
  SmallMachine m;
  m.Remove(m.Sys("devices/system/node/online"));
  m.Remove(m.Sys("devices/system/node/possible"));
  const MachineTopology topo = DiscoverOk(m.paths.Options());
  CHECK(topo.NumNodes() == 2);
  CHECK(topo.NodeCpus(1).ToString() == "4-7");
}

TEST_CASE("namespaces: none, and entries that are not namespaces", "[machine][files]") {
  SmallMachine m;
  SECTION("no netns directory") {
    m.Remove(m.paths.netns_dir);
    const MachineTopology topo = DiscoverOk(m.paths.Options());
    REQUIRE(topo.nics.size() == 1);
    CHECK(topo.nics[0].name == "eth0");
    CHECK(topo.warnings.empty());
  }
  SECTION("a plain file in the netns directory") {
    WriteFile(m.paths.netns_dir + "/stale", "");
    const MachineTopology topo = DiscoverOk(m.paths.Options());
    CHECK(topo.nics.size() == 2);
    REQUIRE(topo.warnings.size() == 1);
    CHECK_THAT(topo.warnings[0], Contains(m.paths.netns_dir + "/stale"));
  }
  SECTION("a netns path that cannot be listed is a warning") {
    m.Remove(m.paths.netns_dir);
    WriteFile(m.paths.netns_dir, "");
    const MachineTopology topo = DiscoverOk(m.paths.Options());
    CHECK(topo.nics.size() == 1);
    REQUIRE(topo.warnings.size() == 1);
    CHECK_THAT(topo.warnings[0], Contains(m.paths.netns_dir));
  }
  SECTION("NIC discovery off") {
    auto options = m.paths.Options();
    options.discover_nics = false;
    CHECK(DiscoverOk(options).nics.empty());
  }
}

TEST_CASE("a NIC on a node that is not online is reported as unknown", "[machine][files]") {
  SmallMachine m;
  WriteFile(m.Sys("class/net/eth0/device/numa_node"), "5\n");
  const MachineTopology topo = DiscoverOk(m.paths.Options());
  CHECK(topo.Nic("eth0")->numa_node == -1);
  REQUIRE(topo.warnings.size() == 1);
  CHECK_THAT(topo.warnings[0], Contains("NUMA node 5"));
  CHECK_THAT(topo.warnings[0], Contains("device/numa_node"));
}

TEST_CASE("offline CPUs are not discovered", "[machine][files]") {
  SmallMachine m;
  WriteFile(m.Sys("devices/system/cpu/online"), "0-2,4-7\n");
  m.Remove(m.Sys("devices/system/cpu/cpu3/topology"));
  const MachineTopology topo = DiscoverOk(m.paths.Options());
  CHECK(topo.NumCpus() == 7);
  CHECK(topo.NodeCpus(0).ToString() == "0-2");  // node cpulist still says 0-3
  CHECK(topo.CoreThreads(2) == CpuSet{2});
  CHECK(topo.Cpu(2)->thread_siblings == CpuSet{2, 3});  // as the file says
}

}  // namespace
}  // namespace qrm::machine
