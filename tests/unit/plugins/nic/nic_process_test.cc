// qrm-nic-plugin as a process on the document's fake machine, called over gRPC.
#include <csignal>

#include <catch2/catch.hpp>
#include <sys/wait.h>

#include "tests/unit/plugins/memory/plugin_process.h"
#include "tests/unit/plugins/nic/nic_test_util.h"

namespace qrm::nic {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

using plugin_testing::PluginProcess;
using qrm::testing::TempDir;
using namespace testutil;

TEST_CASE("qrm-nic-plugin serves hints, Allocate and GetResourcesAllocation over gRPC",
          "[nic][process]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  PluginProcess plugin(
      QRM_NIC_PLUGIN,
      {"--sysfs-root", m.paths.sysfs_root, "--procfs-root", m.paths.procfs_root, "--netns-dir",
       m.paths.netns_dir, "--state-dir", dir.File("state"), "--roles", kRolesJson},
      dir.path());
  if (!plugin.WaitServing()) FAIL("the plugin does not serve; its log:\n" << plugin.Log());

  const auto req = Request("pod1", {{"memory", 20e9}}, {}, "numa-enhancement");
  pb::ResourceHintsResponse hints;
  auto status = plugin.stub().GetTopologyHints(PluginProcess::Context().get(), req, &hints);
  INFO(status.error_message());
  REQUIRE(status.ok());
  const auto& list = hints.resource_hints().at(kNicResourceName);
  REQUIRE(list.hints_size() == 2);
  CHECK(list.hints(1).nodes(0) == 1);

  pb::ResourceAllocationResponse alloc;
  status = plugin.stub().Allocate(PluginProcess::Context().get(), WithHint(req, {1}), &alloc);
  INFO(status.error_message());
  REQUIRE(status.ok());
  const auto& info = alloc.allocation_result().resource_allocation().at(kNicResourceName);
  CHECK(info.envs().at("AFFINITY_NIC_NAME") == "eth1");
  CHECK(info.envs().at("AFFINITY_NIC_ADDR_IPV6") == "fd00:1::10");
  CHECK(info.annotations().at("kubernetes.io/host-netns-path") == m.paths.netns_dir + "/ns1");

  // Bad input crosses the wire as INVALID_ARGUMENT with its message.
  pb::ResourceAllocationResponse bad;
  status = plugin.stub().Allocate(PluginProcess::Context().get(),
                                  Request("bad", {{kNicBandwidthResourceName, -1}}), &bad);
  CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(status.error_message(), Catch::Contains("qrm.io/nic-bandwidth"));

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
            .at(kNicResourceName)
            .allocation_result() == "ns1/eth1");

  const int wait_status = plugin.process().Kill(SIGTERM);
  CHECK(WIFEXITED(wait_status));
  CHECK(WEXITSTATUS(wait_status) == 0);
}

TEST_CASE("qrm-nic-plugin refuses bad flags with a message naming them", "[nic][process]") {
  TempDir dir;
  PluginProcess plugin(QRM_NIC_PLUGIN,
                       {"--state-dir", dir.File("state"), "--bandwidth-ratio", "-1"}, dir.path());
  REQUIRE(qrm::testing::WaitFor([&] { return !plugin.process().running(); }));
  CHECK_THAT(plugin.Log(), Catch::Contains("bandwidth-ratio"));
}

}  // namespace
}  // namespace qrm::nic
