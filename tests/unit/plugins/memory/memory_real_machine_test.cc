// The memory plugin on this machine, with no fake root: its per-node totals are what the
// kernel (sysfs) and libnuma report.
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include <numa.h>

#include "machine/discovery.h"
#include "tests/unit/plugins/memory/memory_test_util.h"

namespace qrm::memory {
namespace {

using qrm::testing::TempDir;
using namespace testutil;

// "Node N MemTotal: <kB> kB" from sysfs, in bytes.
uint64_t SysfsNodeTotal(int node) {
  std::ifstream in("/sys/devices/system/node/node" + std::to_string(node) + "/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string tag, id, key;
    uint64_t kb = 0;
    if (words >> tag >> id >> key >> kb && key == "MemTotal:") return kb * 1024;
  }
  return 0;
}

TEST_CASE("this machine: per-node totals match sysfs and libnuma", "[memory][real]") {
  machine::DiscoveryOptions options;
  options.discover_nics = false;
  auto topo = machine::Discover(options);
  INFO(topo.status().ToString());
  REQUIRE(topo.ok());
  TempDir dir;
  auto plugin = Create(Config(dir.File("state")), *topo);

  auto r = plugin->GetTopologyAwareAllocatableResources();
  REQUIRE(r.ok());
  const auto& mem = r->allocatable_resources().at("memory");
  REQUIRE(mem.topology_aware_capacity_quantity_list_size() == topo->NumNodes());
  for (const auto& q : mem.topology_aware_capacity_quantity_list()) {
    const int node = static_cast<int>(q.node());
    INFO("node " << node);
    const uint64_t reported = static_cast<uint64_t>(q.resource_value());
    WARN("node " << node << ": " << reported << " bytes");
    CHECK(reported == SysfsNodeTotal(node));
    if (numa_available() >= 0) {
      CHECK(static_cast<long long>(reported) == numa_node_size64(node, nullptr));
    }
  }
  for (const auto& q : mem.topology_aware_allocatable_quantity_list()) {
    const uint64_t total = SysfsNodeTotal(static_cast<int>(q.node()));
    CHECK(static_cast<uint64_t>(q.resource_value()) ==
          (total > kDefaultReservedBytes ? total - kDefaultReservedBytes : 0));
  }
}

}  // namespace
}  // namespace qrm::memory
