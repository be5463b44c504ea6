// The plugin on this machine itself (no fake root): it starts with the default options and
// sees the CPUs the kernel and libnuma report.
#include <numa.h>
#include <unistd.h>

#include "tests/unit/plugins/cpu/cpu_test_util.h"

namespace qrm::cpu::testing {
namespace {

TEST_CASE("the real machine: online CPUs as sysconf and libnuma report them",
          "[cpu][real-machine]") {
  machine::DiscoveryOptions options;  // /sys, /proc
  options.discover_nics = false;
  auto topology = machine::Discover(options);
  INFO(topology.status().ToString());
  REQUIRE(topology.ok());
  auto plugin = MakePlugin(*topology);  // defaults: nothing reserved, reclaimed pool 4 or less

  auto allocatable = plugin->GetTopologyAwareAllocatableResources();
  REQUIRE(allocatable.ok());
  const auto& cpu = allocatable->allocatable_resources().at("cpu");
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  CHECK(cpu.aggregated_capacity_quantity() == online);
  CHECK(cpu.aggregated_allocatable_quantity() == online);

  // Per node, as libnuma counts them.
  if (numa_available() >= 0) {
    for (const auto& q : cpu.topology_aware_capacity_quantity_list()) {
      struct bitmask* mask = numa_allocate_cpumask();
      REQUIRE(numa_node_to_cpus(static_cast<int>(q.node()), mask) == 0);
      int count = 0;
      for (unsigned i = 0; i < mask->size; ++i) {
        if (numa_bitmask_isbitset(mask, i) && topology->Cpu(static_cast<int>(i)) != nullptr)
          ++count;
      }
      numa_free_cpumask(mask);
      CHECK(q.resource_value() == count);
    }
  }

  // The default reclaimed pool is auto: empty until reclaimed_cores work comes.
  const CpuPools pools = plugin->pools();
  CHECK(pools.reclaimed.Empty());
  CHECK(pools.shared.Size() == online - pools.reclaimed.Size());
  // And it serves a shared container.
  const auto web = AllocateOk(*plugin, Request("web", "", 0.5));
  CHECK(web.allocation_result() == pools.shared.ToString());
}

}  // namespace
}  // namespace qrm::cpu::testing
