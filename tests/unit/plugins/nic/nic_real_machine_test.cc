// The NIC plugin on this machine, with no fake root.
#include <catch2/catch.hpp>

#include "machine/discovery.h"
#include "tests/unit/plugins/nic/nic_test_util.h"

namespace qrm::nic {
namespace {

using qrm::testing::TempDir;
using namespace testutil;

TEST_CASE("this machine: the plugin starts on the real topology and serves its NICs",
          "[nic][real]") {
  auto topo = machine::Discover({});
  INFO(topo.status().ToString());
  REQUIRE(topo.ok());
  TempDir dir;
  auto plugin = Create(Config(dir.File("state")), *topo);
  WARN("NICs served here: " << plugin->Snapshot().nics().size());

  auto allocatable = plugin->GetTopologyAwareAllocatableResources();
  REQUIRE(allocatable.ok());
  CHECK(allocatable->allocatable_resources().at(kNicResourceName).aggregated_capacity_quantity() ==
        static_cast<double>(topo->nics.size()));

  // A NIC that is up gets the container; what it is told is that NIC's own data.
  const machine::NicInfo* up = nullptr;
  for (const auto& nic : topo->nics) {
    if (nic.operstate == "up" && up == nullptr) up = &nic;
  }
  if (up == nullptr) {
    WARN("no NIC is up on this machine: nothing to allocate");
    return;
  }
  const auto info = AllocateOk(*plugin, Request("p", {{kNicResourceName, 1}}));
  const std::string name = info.envs().at("AFFINITY_NIC_NAME");
  const machine::NicInfo* given = nullptr;
  for (const auto& nic : topo->nics) {
    if (nic.name == name) given = &nic;
  }
  REQUIRE(given != nullptr);
  CHECK(given->operstate == "up");
  if (!given->ipv4.empty()) CHECK(info.envs().at("AFFINITY_NIC_ADDR_IPV4") == given->ipv4.front());
  if (given->numa_node >= 0) {
    REQUIRE(info.resource_hints().hints_size() == 1);
    CHECK(info.resource_hints().hints(0).nodes(0) == static_cast<uint64_t>(given->numa_node));
  }
}

}  // namespace
}  // namespace qrm::nic
