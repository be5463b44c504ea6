// Every built-in fake machine shape, generated and discovered: CPUs, cores, sockets, NUMA
// nodes, memory, distances, huge pages and NICs.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "machine/discovery.h"
#include "testing/machine/fake_machine.h"
#include "testing/temp_dir.h"
#include "tests/unit/machine/machine_test_util.h"

namespace qrm::machine {
namespace {

using testing::TempDir;
using testutil::DiscoverOk;
using testutil::Generate;

constexpr uint64_t kGiB = uint64_t{1} << 30;

CpuSet Cpus(std::string_view text) {
  auto set = CpuSet::Parse(text);
  REQUIRE(set.ok());
  return *set;
}

TEST_CASE("doc80: the design document's 80-cpu two-node machine", "[machine][shapes]") {
  TempDir dir;
  const auto paths = Generate(fake::Doc80Shape(), dir);
  const MachineTopology topo = DiscoverOk(paths.Options());
  INFO(topo.Describe());

  // CPUs: 80 online, two sockets of 20 two-thread cores, siblings adjacent.
  CHECK(topo.NumCpus() == 80);
  CHECK(topo.OnlineCpus() == Cpus("0-79"));
  CHECK(topo.ThreadsPerCore() == 2);
  const auto cores = topo.Cores();
  CHECK(cores.size() == 40);
  for (const Core& core : cores) {
    CHECK(core.threads.Size() == 2);
    CHECK(*core.threads.First() % 2 == 0);
  }
  CHECK(topo.CoreThreads(0) == CpuSet{0, 1});
  CHECK(topo.CoreThreads(1) == CpuSet{0, 1});
  CHECK(topo.CoreThreads(41) == CpuSet{40, 41});
  CHECK(topo.CoreThreads(79) == CpuSet{78, 79});
  CHECK(topo.CoreThreads(80).Empty());
  CHECK(topo.Cpu(3)->thread_siblings == CpuSet{2, 3});
  // core_id restarts in every package: cpu 0 and cpu 40 share core_id 0 but not a core.
  REQUIRE(topo.Cpu(40) != nullptr);
  CHECK(topo.Cpu(0)->core_id == 0);
  CHECK(topo.Cpu(40)->core_id == 0);
  CHECK(topo.Cpu(40)->package_id == 1);
  CHECK(topo.Cpu(79)->core_id == 19);
  CHECK_FALSE(topo.CoreThreads(0).Overlaps(topo.CoreThreads(40)));
  CHECK(topo.Sockets() == std::map<int, CpuSet>{{0, Cpus("0-39")}, {1, Cpus("40-79")}});
  CHECK(topo.SocketCpus(1) == Cpus("40-79"));

  // NUMA: node 0 = 0-39, node 1 = 40-79.
  CHECK(topo.NumNodes() == 2);
  CHECK(topo.NodeMask() == NumaMask::FirstN(2));
  CHECK(topo.NodesWithCpus() == NumaMask::FirstN(2));
  CHECK(topo.NodeCpus(0) == Cpus("0-39"));
  CHECK(topo.NodeCpus(1) == Cpus("40-79"));
  CHECK(topo.NodeCpus(2).Empty());
  CHECK(topo.NodeCpuSets() == std::map<int, CpuSet>{{0, Cpus("0-39")}, {1, Cpus("40-79")}});
  CHECK(topo.NodeOfCpu(0) == 0);
  CHECK(topo.NodeOfCpu(39) == 0);
  CHECK(topo.NodeOfCpu(40) == 1);
  CHECK(topo.NodeOfCpu(79) == 1);
  CHECK_FALSE(topo.NodeOfCpu(80).has_value());
  for (const Core& core : cores) CHECK(core.node == topo.NodeOfCpu(*core.threads.First()));

  // Memory exactly as in example 2 of the design document.
  CHECK(topo.Node(0)->memory_total_bytes == 237706936320ULL);
  CHECK(topo.Node(1)->memory_total_bytes == 237806551040ULL);
  CHECK(topo.Node(0)->memory_free_bytes == 200 * kGiB);
  CHECK(topo.Node(1)->memory_free_bytes == 210 * kGiB);
  CHECK(topo.TotalMemoryBytes() == 237706936320ULL + 237806551040ULL);
  CHECK(topo.Distance(0, 0) == 10);
  CHECK(topo.Distance(0, 1) == 21);
  CHECK(topo.Distance(1, 0) == 21);
  CHECK(topo.Distance(1, 1) == 10);
  CHECK_FALSE(topo.Distance(0, 2).has_value());
  const std::vector<HugePagePool> no_pages = {{2048 * 1024, 0, 0}, {1024ULL * 1024 * 1024, 0, 0}};
  CHECK(topo.Node(0)->hugepages == no_pages);

  // NICs: eth0 on node 0 in the root namespace, eth1 on node 1 in netns ns1.
  REQUIRE(topo.nics.size() == 2);
  const NicInfo& eth0 = topo.nics[0];
  CHECK(eth0.name == "eth0");
  CHECK(eth0.netns == "");
  CHECK(eth0.netns_path == "");
  CHECK(eth0.numa_node == 0);
  CHECK(eth0.speed_mbps == 25000);
  CHECK(eth0.speed_known);
  CHECK(eth0.operstate == "up");
  CHECK(eth0.mac == "0c:42:a1:00:00:10");
  CHECK(eth0.ifindex == 2);
  CHECK_FALSE(eth0.is_virtual);
  CHECK(eth0.ipv4 == std::vector<std::string>{"10.0.0.10"});
  CHECK(eth0.ipv6 == std::vector<std::string>{"fd00::10"});  // the fe80:: one is dropped
  const NicInfo& eth1 = topo.nics[1];
  CHECK(eth1.name == "eth1");
  CHECK(eth1.netns == "ns1");
  CHECK(eth1.netns_path == paths.netns_dir + "/ns1");
  CHECK(eth1.numa_node == 1);
  CHECK(eth1.speed_mbps == 25000);
  CHECK(eth1.ipv4 == std::vector<std::string>{"10.0.1.10"});
  CHECK(eth1.ipv6 == std::vector<std::string>{"fd00:1::10"});
  CHECK(topo.Nic("eth1", "ns1") == &eth1);
  CHECK(topo.Nic("eth1") == nullptr);
  REQUIRE(topo.NicsOnNode(1).size() == 1);
  CHECK(topo.NicsOnNode(1)[0]->name == "eth1");
  CHECK(topo.warnings.empty());

  const std::string text = topo.Describe();
  CHECK_THAT(text, Catch::Contains("80 cpus (0-79), 2 sockets, 40 cores, 2 threads/core, "
                                   "2 numa nodes, 2 nics"));
  CHECK_THAT(text, Catch::Contains("node 0: cpus 0-39"));
  CHECK_THAT(text, Catch::Contains("node 1: cpus 40-79"));
  CHECK_THAT(text, Catch::Contains("nic eth1 (netns ns1 " + paths.netns_dir + "/ns1): node 1"));
}

TEST_CASE("4x32smt: four nodes, two per socket", "[machine][shapes]") {
  TempDir dir;
  const auto shape = fake::FourBy32SmtShape();
  const auto paths = Generate(shape, dir);
  const MachineTopology topo = DiscoverOk(paths.Options());
  INFO(topo.Describe());

  CHECK(topo.NumCpus() == 128);
  CHECK(topo.ThreadsPerCore() == 2);
  CHECK(topo.Cores().size() == 64);
  CHECK(topo.Sockets() == std::map<int, CpuSet>{{0, Cpus("0-63")}, {1, Cpus("64-127")}});
  CHECK(topo.NumNodes() == 4);
  CHECK(topo.NodeMask() == NumaMask::FirstN(4));
  for (int n = 0; n < 4; ++n) {
    CHECK(topo.NodeCpus(n) == shape.NodeCpus(n));
    CHECK(topo.NodeCpus(n).Size() == 32);
    CHECK(topo.Node(n)->memory_total_bytes == 64 * kGiB);
    CHECK(topo.Node(n)->hugepages ==
          std::vector<HugePagePool>{{2048 * 1024, 0, 0}, {1024ULL * 1024 * 1024, 4, 2}});
  }
  CHECK(topo.NodeCpus(1) == Cpus("32-63"));
  CHECK(topo.CoreThreads(33) == CpuSet{32, 33});
  // Core ids run on across the two nodes of a socket and restart in the next socket.
  CHECK(topo.Cpu(32)->core_id == 16);
  CHECK(topo.Cpu(64)->core_id == 0);
  CHECK(topo.Cpu(64)->package_id == 1);
  CHECK(topo.Distance(0, 1) == 12);
  CHECK(topo.Distance(0, 2) == 21);
  CHECK(topo.Distance(3, 2) == 12);
  CHECK(topo.Distance(2, 2) == 10);

  // The virtual veth0 is left out by default.
  REQUIRE(topo.nics.size() == 4);
  for (int n = 0; n < 4; ++n) {
    const NicInfo& nic = topo.nics[n];
    CHECK(nic.name == "eth" + std::to_string(n));
    CHECK(nic.numa_node == n);
    CHECK(nic.speed_mbps == 100000);
    CHECK(nic.ipv4 == std::vector<std::string>{"10.0." + std::to_string(n) + ".20"});
  }

  auto options = paths.Options();
  options.include_virtual_nics = true;
  const MachineTopology with_virtual = DiscoverOk(options);
  REQUIRE(with_virtual.nics.size() == 5);
  const NicInfo* veth = with_virtual.Nic("veth0");
  REQUIRE(veth != nullptr);
  CHECK(veth->is_virtual);
  CHECK(veth->numa_node == -1);  // no device, several nodes: unknown
  CHECK(veth->speed_mbps == 10000);
  CHECK(veth->ipv4 == std::vector<std::string>{"172.16.0.1"});
  CHECK(with_virtual.Nic("lo") == nullptr);
}

TEST_CASE("nosmt: one node, no SMT, unknown NIC node and speed", "[machine][shapes]") {
  TempDir dir;
  const auto paths = Generate(fake::NoSmtShape(), dir);
  auto options = paths.Options();
  options.unknown_nic_speed_mbps = 10000;
  const MachineTopology topo = DiscoverOk(options);
  INFO(topo.Describe());

  CHECK(topo.NumCpus() == 16);
  CHECK(topo.ThreadsPerCore() == 1);
  CHECK(topo.Cores().size() == 16);
  CHECK(topo.CoreThreads(5) == CpuSet{5});
  CHECK(topo.Cpu(5)->thread_siblings == CpuSet{5});
  CHECK(topo.Sockets().size() == 1);
  CHECK(topo.NumNodes() == 1);
  CHECK(topo.NodeCpus(0) == Cpus("0-15"));
  CHECK(topo.NodeMask() == NumaMask::FirstN(1));
  CHECK(topo.Node(0)->memory_total_bytes == 32 * kGiB);
  CHECK(topo.Node(0)->hugepages == std::vector<HugePagePool>{{2048 * 1024, 512, 512}});
  CHECK(topo.Distance(0, 0) == 10);

  REQUIRE(topo.nics.size() == 1);
  CHECK(topo.nics[0].numa_node == 0);  // -1 on a one-node machine is node 0
  CHECK(topo.nics[0].speed_mbps == 10000);
  CHECK_FALSE(topo.nics[0].speed_known);
  CHECK(topo.nics[0].ipv4 == std::vector<std::string>{"192.168.1.5"});
  CHECK(topo.nics[0].ipv6.empty());
}

TEST_CASE("memonly: a node with memory and no CPUs", "[machine][shapes]") {
  TempDir dir;
  const auto paths = Generate(fake::MemOnlyShape(), dir);
  const MachineTopology topo = DiscoverOk(paths.Options());
  INFO(topo.Describe());

  CHECK(topo.NumCpus() == 16);
  CHECK(topo.NumNodes() == 2);
  CHECK(topo.NodeMask() == NumaMask::FirstN(2));
  CHECK(topo.NodesWithCpus() == NumaMask::FirstN(1));
  CHECK(topo.NodeCpus(0) == Cpus("0-15"));
  CHECK(topo.NodeCpus(1).Empty());
  REQUIRE(topo.Node(1) != nullptr);
  CHECK(topo.Node(1)->memory_total_bytes == 64 * kGiB);
  CHECK(topo.Node(1)->memory_free_bytes == 64 * kGiB);
  CHECK(topo.Distance(0, 1) == 21);
  CHECK(topo.Sockets().size() == 1);  // the memory-only node's socket has no CPUs

  REQUIRE(topo.nics.size() == 1);
  CHECK(topo.nics[0].numa_node == -1);  // -1 on a two-node machine stays unknown
  CHECK(topo.NicsOnNode(0).empty());
  CHECK(topo.nics[0].speed_mbps == 0);  // "0" is unknown; the default unknown value is 0
  CHECK_FALSE(topo.nics[0].speed_known);
  CHECK(topo.nics[0].operstate == "down");
  CHECK(topo.nics[0].ipv4.empty());
  CHECK_THAT(topo.Describe(), Catch::Contains("node 1: cpus none"));
}

TEST_CASE("snc4: one socket of four NUMA nodes", "[machine][shapes]") {
  TempDir dir;
  const MachineTopology topo = DiscoverOk(Generate(fake::Snc4Shape(), dir).Options());
  INFO(topo.Describe());
  CHECK(topo.NumCpus() == 32);
  CHECK(topo.Cores().size() == 16);
  CHECK(topo.Sockets() == std::map<int, CpuSet>{{0, Cpus("0-31")}});
  CHECK(topo.NumNodes() == 4);
  for (int n = 0; n < 4; ++n)
    CHECK(topo.NodeCpus(n) == Cpus(fmt::format("{}-{}", 8 * n, 8 * n + 7)));
  CHECK(topo.CoreThreads(31) == CpuSet{30, 31});
  CHECK(topo.Distance(0, 3) == 12);
}

TEST_CASE("intel96: Intel sibling numbering, cpu i and i+48 share a core", "[machine][shapes]") {
  TempDir dir;
  const auto shape = fake::Intel96Shape();
  const MachineTopology topo = DiscoverOk(Generate(shape, dir).Options());
  INFO(topo.Describe());
  CHECK(topo.NumCpus() == 96);
  CHECK(topo.ThreadsPerCore() == 2);
  CHECK(topo.Cores().size() == 48);
  for (int cpu = 0; cpu < 48; ++cpu) CHECK(topo.CoreThreads(cpu) == CpuSet{cpu, cpu + 48});
  CHECK(topo.Cpu(59)->thread_siblings == CpuSet{11, 59});
  CHECK(topo.NodeCpus(0) == Cpus("0-11,48-59"));
  CHECK(topo.NodeCpus(1) == Cpus("12-23,60-71"));
  CHECK(topo.NodeCpus(2) == Cpus("24-35,72-83"));
  CHECK(topo.NodeCpus(3) == Cpus("36-47,84-95"));
  for (int n = 0; n < 4; ++n) CHECK(topo.NodeCpus(n) == shape.NodeCpus(n));
  CHECK(topo.Sockets() == std::map<int, CpuSet>{{0, Cpus("0-23,48-71")}, {1, Cpus("24-47,72-95")}});
  CHECK(topo.Cpu(78)->package_id == 1);
  CHECK(topo.Cpu(78)->core_id == topo.Cpu(30)->core_id);
}

TEST_CASE("snc4x2off: four nodes per socket, Intel numbering, offline CPUs", "[machine][shapes]") {
  TempDir dir;
  const auto paths = Generate(fake::Snc4x2OfflineShape(), dir);
  const MachineTopology topo = DiscoverOk(paths.Options());
  INFO(topo.Describe());
  CHECK(topo.NumCpus() == 60);
  CHECK(topo.OnlineCpus() == Cpus("0-12,14-37,39-44,46-62"));
  CHECK(topo.NumNodes() == 8);
  CHECK(topo.Sockets().size() == 2);
  CHECK(topo.NodeCpus(0) == Cpus("0-3,32-35"));
  CHECK(topo.NodeCpus(1) == Cpus("4-7,36-37,39"));       // 38 offline
  CHECK(topo.NodeCpus(3) == Cpus("12,14-15,44,46-47"));  // core 13 (13, 45) offline
  CHECK(topo.NodeCpus(7) == Cpus("28-31,60-62"));        // 63 offline
  CHECK(topo.SocketCpus(1) == Cpus("16-31,48-62"));
  // A core whose sibling is offline has one thread; a core with no online thread is gone.
  CHECK(topo.CoreThreads(6) == CpuSet{6});
  CHECK(topo.CoreThreads(31) == CpuSet{31});
  CHECK(topo.CoreThreads(5) == CpuSet{5, 37});
  CHECK(topo.Cores().size() == 31);
  CHECK(topo.ThreadsPerCore() == 2);
  CHECK(topo.Distance(4, 7) == 12);
  CHECK(topo.Distance(3, 4) == 21);
}

TEST_CASE("custom shapes: SMT-4, explicit distances, several namespaces", "[machine][shapes]") {
  fake::FakeMachineShape shape;
  shape.name = "custom";
  shape.nodes = {{8, 8 * kGiB, 4 * kGiB, {}}, {8, 8 * kGiB, 4 * kGiB, {}}};
  shape.threads_per_core = 4;
  shape.nodes_per_socket = 2;
  shape.distances = {{10, 16}, {16, 10}};
  fake::FakeNic a;
  a.name = "ens1";
  a.netns = "blue";
  a.numa_node = 1;
  a.mac = "02:00:00:00:00:01";
  fake::FakeNic b = a;
  b.name = "ens0";
  b.numa_node = 0;
  fake::FakeNic c = a;
  c.name = "ens2";
  c.netns = "alpha";
  shape.nics = {a, b, c};

  TempDir dir;
  const auto paths = Generate(shape, dir);
  const MachineTopology topo = DiscoverOk(paths.Options());
  INFO(topo.Describe());
  CHECK(topo.ThreadsPerCore() == 4);
  CHECK(topo.CoreThreads(6) == Cpus("4-7"));
  CHECK(topo.Cores().size() == 4);
  CHECK(topo.Sockets().size() == 1);
  CHECK(topo.Distance(0, 1) == 16);
  // Root namespace first, then namespaces by name, names sorted within each.
  REQUIRE(topo.nics.size() == 3);
  CHECK(topo.nics[0].netns == "alpha");
  CHECK(topo.nics[0].name == "ens2");
  CHECK(topo.nics[1].netns == "blue");
  CHECK(topo.nics[1].name == "ens0");
  CHECK(topo.nics[1].numa_node == 0);
  CHECK(topo.nics[2].name == "ens1");
  CHECK(topo.nics[2].numa_node == 1);
  CHECK(topo.nics[2].ifindex == 2);
}

TEST_CASE("a kernel without NUMA: one node from /proc/meminfo", "[machine][shapes]") {
  auto shape = fake::NoSmtShape();
  shape.write_node_dir = false;
  TempDir dir;
  const auto paths = Generate(shape, dir);
  const MachineTopology topo = DiscoverOk(paths.Options());
  INFO(topo.Describe());
  CHECK(topo.NumNodes() == 1);
  CHECK(topo.NodeCpus(0) == Cpus("0-15"));
  CHECK(topo.Node(0)->memory_total_bytes == 32 * kGiB);
  CHECK(topo.Node(0)->memory_free_bytes == 30 * kGiB);
  CHECK(topo.Distance(0, 0) == 10);
  CHECK(topo.Node(0)->hugepages == std::vector<HugePagePool>{{2048 * 1024, 512, 512}});
  CHECK(topo.NodeOfCpu(15) == 0);
}

TEST_CASE("inconsistent shapes are rejected", "[machine][shapes]") {
  TempDir dir;
  auto shape = fake::Doc80Shape();
  shape.nodes[0].cpus = 39;  // not a multiple of two threads per core
  auto written = fake::WriteFakeMachine(shape, dir.path());
  REQUIRE_FALSE(written.ok());
  CHECK_THAT(written.status().message(), Catch::Contains("node 0 has 39 cpus"));

  shape = fake::Doc80Shape();
  shape.nics[1].numa_node = 2;
  written = fake::WriteFakeMachine(shape, dir.path());
  REQUIRE_FALSE(written.ok());
  CHECK_THAT(written.status().message(), Catch::Contains("eth1 on node 2"));

  CHECK(fake::ShapeByName("nope").status().code() == StatusCode::kNotFound);
  for (const std::string& name : fake::ShapeNames()) CHECK(fake::ShapeByName(name).ok());
}

}  // namespace
}  // namespace qrm::machine
