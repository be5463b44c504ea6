// MachineTopology's derived queries on hand-built values (no discovery involved).
#include "machine/topology.h"

#include <catch2/catch.hpp>

namespace qrm::machine {
namespace {

using Catch::Contains;

CpuInfo MakeCpu(int id, int package, int die, int core, int node) {
  CpuInfo cpu;
  cpu.id = id;
  cpu.package_id = package;
  cpu.die_id = die;
  cpu.core_id = core;
  cpu.node = node;
  return cpu;
}

TEST_CASE("cores are keyed by package, die and core id", "[machine][topology]") {
  MachineTopology topo;
  // Two dies in one package, both numbering their cores from 0; siblings not adjacent.
  topo.cpus = {MakeCpu(0, 0, 0, 0, 0), MakeCpu(1, 0, 0, 1, 0), MakeCpu(2, 0, 1, 0, 1),
               MakeCpu(3, 0, 1, 1, 1), MakeCpu(4, 0, 0, 0, 0), MakeCpu(5, 0, 0, 1, 0),
               MakeCpu(6, 0, 1, 0, 1), MakeCpu(7, 0, 1, 1, 1)};
  topo.nodes.resize(2);
  topo.nodes[0].id = 0;
  topo.nodes[0].cpus = {0, 1, 4, 5};
  topo.nodes[1].id = 1;
  topo.nodes[1].cpus = {2, 3, 6, 7};

  const auto cores = topo.Cores();
  REQUIRE(cores.size() == 4);
  CHECK(cores[0].key == CoreKey{0, 0, 0});
  CHECK(cores[0].threads == CpuSet{0, 4});
  CHECK(cores[2].key == CoreKey{0, 1, 0});
  CHECK(cores[2].threads == CpuSet{2, 6});
  CHECK(cores[2].node == 1);
  CHECK(topo.CoreThreads(6) == CpuSet{2, 6});
  CHECK(topo.ThreadsPerCore() == 2);
  CHECK(topo.Sockets().size() == 1);
  CHECK(topo.SocketCpus(0) == topo.OnlineCpus());
  CHECK(topo.SocketCpus(1).Empty());
  CHECK(topo.NodeOfCpu(6) == 1);
  CHECK(topo.Cpu(8) == nullptr);
}

TEST_CASE("Describe summarises cpus, nodes, nics and warnings", "[machine][topology]") {
  MachineTopology topo;
  topo.cpus = {MakeCpu(0, 0, 0, 0, 0), MakeCpu(1, 0, 0, 1, 0)};
  topo.nodes.resize(2);
  topo.nodes[0].id = 0;
  topo.nodes[0].cpus = {0, 1};
  topo.nodes[0].memory_total_bytes = uint64_t{8} << 30;
  topo.nodes[0].memory_free_bytes = uint64_t{512} << 20;
  topo.nodes[0].distances = {{0, 10}, {1, 20}};
  topo.nodes[0].hugepages = {{2 << 20, 16, 8}};
  topo.nodes[1].id = 1;
  topo.nodes[1].memory_total_bytes = uint64_t{16} << 30;
  NicInfo nic;
  nic.name = "eth1";
  nic.netns = "ns1";
  nic.netns_path = "/var/run/netns/ns1";
  nic.numa_node = -1;
  nic.speed_mbps = 25000;
  nic.speed_known = true;
  nic.operstate = "up";
  nic.mac = "0c:42:a1:00:01:10";
  nic.ipv6 = {"fdbd:dc05:3:155::20"};
  topo.nics = {nic};
  topo.warnings = {"something odd"};

  CHECK(topo.Summary() == "2 cpus (0-1), 1 socket, 2 cores, 1 threads/core, 2 numa nodes, 1 nic");
  const std::string text = topo.Describe();
  CHECK_THAT(text, Contains("node 0: cpus 0-1, memory 8.00 GiB (free 512.00 MiB), distances 10 20"
                            ", hugepages-2048kB 8/16 free"));
  CHECK_THAT(text, Contains("node 1: cpus none, memory 16.00 GiB (free 0.00 MiB), distances "
                            "unknown"));
  CHECK_THAT(text, Contains("nic eth1 (netns ns1 /var/run/netns/ns1): node unknown, 25000 Mb/s, "
                            "up, 0c:42:a1:00:01:10, fdbd:dc05:3:155::20"));
  CHECK_THAT(text, Contains("warning: something odd"));
  CHECK(topo.NodeMask() == NumaMask::FirstN(2));
  CHECK(topo.NodesWithCpus() == NumaMask::FirstN(1));
  CHECK(topo.TotalMemoryBytes() == (uint64_t{24} << 30));
  CHECK(topo.NicsOnNode(0).empty());
}

}  // namespace
}  // namespace qrm::machine
