// qrm-memory-plugin as a process on the document's fake machine, called over gRPC.
#include <csignal>

#include <catch2/catch.hpp>
#include <sys/wait.h>

#include "tests/unit/plugins/memory/memory_test_util.h"
#include "tests/unit/plugins/memory/plugin_process.h"

namespace qrm::memory {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

using plugin_testing::PluginProcess;
using qrm::testing::TempDir;
using namespace testutil;

TEST_CASE("qrm-memory-plugin serves hints, Allocate and GetResourcesAllocation over gRPC",
          "[memory][process]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  PluginProcess plugin(QRM_MEMORY_PLUGIN,
                       {"--sysfs-root", m.paths.sysfs_root, "--procfs-root", m.paths.procfs_root,
                        "--netns-dir", m.paths.netns_dir, "--state-dir", dir.File("state"),
                        "--reserved-memory", "0=1Gi", "--roles", kRolesJson},
                       dir.path());
  if (!plugin.WaitServing()) FAIL("the plugin does not serve; its log:\n" << plugin.Log());

  const auto req = Request("pod1", 40.0 * kGiB, "storage-service");
  pb::ResourceHintsResponse hints;
  auto status = plugin.stub().GetTopologyHints(PluginProcess::Context().get(), req, &hints);
  INFO(status.error_message());
  REQUIRE(status.ok());
  const auto& list = hints.resource_hints().at("memory");
  REQUIRE(list.hints_size() == 3);
  CHECK(list.hints(0).nodes(0) == 0);
  CHECK(list.hints(0).preferred());
  CHECK_FALSE(list.hints(2).preferred());

  pb::ResourceAllocationResponse alloc;
  status = plugin.stub().Allocate(PluginProcess::Context().get(), WithHint(req, {0}), &alloc);
  INFO(status.error_message());
  REQUIRE(status.ok());
  const auto& info = alloc.allocation_result().resource_allocation().at("memory");
  CHECK(info.oci_property_name() == "CpusetMems");
  CHECK(info.allocation_result() == "0");
  CHECK(info.allocated_quantity() == 40.0 * kGiB);

  pb::GetResourcesAllocationResponse all;
  status = plugin.stub().GetResourcesAllocation(PluginProcess::Context().get(),
                                                pb::GetResourcesAllocationRequest(), &all);
  REQUIRE(status.ok());
  REQUIRE(all.pod_resources().size() == 1);
  CHECK(all.pod_resources()
            .at("uid-pod1")
            .container_resources()
            .at("c0")
            .resource_allocation()
            .at("memory")
            .allocation_result() == "0");

  // The --reserved-memory flag reached the accounting: node 0 keeps 1Gi back.
  pb::GetTopologyAwareAllocatableResourcesResponse allocatable;
  status = plugin.stub().GetTopologyAwareAllocatableResources(
      PluginProcess::Context().get(), pb::GetTopologyAwareAllocatableResourcesRequest(),
      &allocatable);
  REQUIRE(status.ok());
  const auto& mem = allocatable.allocatable_resources().at("memory");
  CHECK(mem.topology_aware_allocatable_quantity_list(0).resource_value() ==
        static_cast<double>(237706936320ULL - kGiB));
  CHECK(mem.topology_aware_allocatable_quantity_list(1).resource_value() == 237282263040.0);

  // Options as registered: NUMA alignment and reconcile.
  pb::ResourcePluginOptions options;
  REQUIRE(plugin.stub()
              .GetResourcePluginOptions(PluginProcess::Context().get(), pb::Empty(), &options)
              .ok());
  CHECK(options.with_topology_alignment());
  CHECK(options.need_reconcile());

  const int wait_status = plugin.process().Kill(SIGTERM);
  CHECK(WIFEXITED(wait_status));
  CHECK(WEXITSTATUS(wait_status) == 0);
}

TEST_CASE("qrm-memory-plugin refuses a bad --reserved-memory naming it", "[memory][process]") {
  TempDir dir;
  PluginProcess plugin(QRM_MEMORY_PLUGIN,
                       {"--state-dir", dir.File("state"), "--reserved-memory", "0=lots"},
                       dir.path());
  REQUIRE(qrm::testing::WaitFor([&] { return !plugin.process().running(); }));
  CHECK_THAT(plugin.Log(), Catch::Contains("reserved-memory"));
  CHECK_THAT(plugin.Log(), Catch::Contains("lots"));
}

}  // namespace
}  // namespace qrm::memory
