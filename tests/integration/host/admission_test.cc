// Admission through real plugin processes: hints, merge, allocate, all or
// nothing, deadlines, failure policy, restart.
#include <fstream>
#include <thread>

#include "tests/integration/host/host_fixture.h"

namespace qrm::host::testing {
namespace {

TEST_CASE("hints from two plugins are merged and both allocate on the result", "[admission]") {
  HostFixture f;
  Host& host = f.StartHost();
  // a: prefers {0} or {1}; b: can only do {1}.
  f.StartPlugin("test.qrm.io/a", {"--hints", "{0}:p,{1}:p,{0-1}:n"});
  f.StartPlugin("test.qrm.io/b", {"--hints", "{1}:p,{0-1}:n"});
  REQUIRE(f.WaitRegistered("test.qrm.io/a"));
  REQUIRE(f.WaitRegistered("test.qrm.io/b"));

  auto result =
      host.admission().Admit(Request("p1", "c0", {{"test.qrm.io/a", 2}, {"test.qrm.io/b", 1}}));
  INFO(result.status().ToString());
  REQUIRE(result.ok());
  CHECK_FALSE(result->readmitted);
  // The merged affinity {1} reached both plugins, and their CpusetMems agree.
  CHECK(result->allocation.resources.at("test.qrm.io/a").allocation_result() == "1");
  CHECK(result->allocation.resources.at("test.qrm.io/b").allocation_result() == "1");
  CHECK(result->update.resources.cpuset_mems() == "1");
  CHECK(result->update.envs.at("TEST_PLUGIN_NODES") == "1");
  CHECK(result->allocation.request.hint().preferred());
  CHECK(f.Calls("test.qrm.io/a", "Allocate") == 1);
  CHECK(f.Calls("test.qrm.io/b", "Allocate") == 1);
  // And it is durable.
  CHECK(host.state().GetContainer("p1", "c0") != nullptr);
}

TEST_CASE("single-numa-node rejects what fits no single node, before allocating", "[admission]") {
  HostFixture f;
  auto options = f.Options();
  options.admission.policy = topology::Policy::kSingleNumaNode;
  Host& host = f.StartHost(options);
  f.StartPlugin("test.qrm.io/a", {"--hints", "{0-1}:p"});
  REQUIRE(f.WaitRegistered("test.qrm.io/a"));
  auto result = host.admission().Admit(Request("p1", "c0", {{"test.qrm.io/a", 2}}));
  REQUIRE_FALSE(result.ok());
  CHECK_THAT(result.status().message(), Catch::Contains("topology affinity error"));
  CHECK(f.Calls("test.qrm.io/a", "Allocate") == 0);
  CHECK(host.state().GetPod("p1") == nullptr);
}

TEST_CASE("a pod uid the checkpoint cannot store is refused before any plugin call",
          "[admission]") {
  HostFixture f;
  Host& host = f.StartHost();
  f.StartPlugin("test.qrm.io/a");
  REQUIRE(f.WaitRegistered("test.qrm.io/a"));
  auto result = host.admission().Admit(Request("../p1", "c0", {{"test.qrm.io/a", 1}}));
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(result.status().message(), Catch::Contains("pod uid \"../p1\""));
  CHECK(f.Calls("test.qrm.io/a", "GetTopologyHints") == 0);
  CHECK(f.Calls("test.qrm.io/a", "Allocate") == 0);
  CHECK(host.state().Snapshot().empty());
}

TEST_CASE("admission is all or nothing when the second plugin fails", "[admission]") {
  HostFixture f;
  Host& host = f.StartHost();
  f.StartPlugin("test.qrm.io/a");
  f.StartPlugin("test.qrm.io/b", {"--fail", "Allocate"});
  REQUIRE(f.WaitRegistered("test.qrm.io/a"));
  REQUIRE(f.WaitRegistered("test.qrm.io/b"));

  auto result =
      host.admission().Admit(Request("p1", "c0", {{"test.qrm.io/a", 1}, {"test.qrm.io/b", 1}}));
  REQUIRE_FALSE(result.ok());
  CHECK_THAT(result.status().message(), Catch::Contains("failed as configured"));
  // Plugin a allocated, then was told to release the pod; the host kept nothing.
  CHECK(f.Calls("test.qrm.io/a", "Allocate") == 1);
  CHECK(f.Calls("test.qrm.io/a", "RemovePod") == 1);
  CHECK(host.state().GetPod("p1") == nullptr);
  auto allocations =
      host.registry().Find("test.qrm.io/a")->GetResourcesAllocation(std::chrono::seconds(2));
  REQUIRE(allocations.ok());
  CHECK(allocations->pod_resources().count("p1") == 0);
}

TEST_CASE("a rollback restores the pod's other containers on the plugin", "[admission]") {
  HostFixture f;
  Host& host = f.StartHost();
  f.StartPlugin("test.qrm.io/a");
  f.StartPlugin("test.qrm.io/b", {"--fail", "Allocate"});
  REQUIRE(f.WaitRegistered("test.qrm.io/a"));
  REQUIRE(f.WaitRegistered("test.qrm.io/b"));
  REQUIRE(host.admission().Admit(Request("p1", "c0", {{"test.qrm.io/a", 1}})).ok());
  REQUIRE_FALSE(host.admission()
                    .Admit(Request("p1", "c1", {{"test.qrm.io/a", 1}, {"test.qrm.io/b", 1}}))
                    .ok());
  // RemovePod dropped c0 on plugin a; the host replayed its Allocate.
  CHECK(f.Calls("test.qrm.io/a", "RemovePod") == 1);
  CHECK(f.Calls("test.qrm.io/a", "Allocate") == 3);
  auto allocations =
      host.registry().Find("test.qrm.io/a")->GetResourcesAllocation(std::chrono::seconds(2));
  REQUIRE(allocations.ok());
  const auto& containers = allocations->pod_resources().at("p1").container_resources();
  CHECK(containers.count("c0") == 1);
  CHECK(containers.count("c1") == 0);
  CHECK(host.state().GetContainer("p1", "c0") != nullptr);
  CHECK(host.state().GetContainer("p1", "c1") == nullptr);
}

TEST_CASE("a hung plugin fails the admission at the deadline", "[admission]") {
  HostFixture f;
  auto options = f.Options();
  options.admission.rpc_timeout = std::chrono::milliseconds(500);
  Host& host = f.StartHost(options);
  f.StartPlugin("test.qrm.io/a");
  f.StartPlugin("test.qrm.io/slow", {"--hang", "Allocate"});
  REQUIRE(f.WaitRegistered("test.qrm.io/a"));
  REQUIRE(f.WaitRegistered("test.qrm.io/slow"));
  const auto start = std::chrono::steady_clock::now();
  auto result =
      host.admission().Admit(Request("p1", "c0", {{"test.qrm.io/a", 1}, {"test.qrm.io/slow", 1}}));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == StatusCode::kDeadlineExceeded);
  CHECK(elapsed < std::chrono::milliseconds(2500));
  CHECK(host.state().GetPod("p1") == nullptr);
  CHECK(f.Calls("test.qrm.io/a", "RemovePod") == 1);
  // A slow plugin is not a dead one.
  CHECK_FALSE(host.registry().Find("test.qrm.io/slow")->stopped());
}

TEST_CASE("shared_cores is admitted without a failing plugin, dedicated_cores is not",
          "[admission]") {
  HostFixture f;
  Host& host = f.StartHost();
  f.StartPlugin("test.qrm.io/a");
  f.StartPlugin("test.qrm.io/broken", {"--fail", "GetTopologyHints"});
  REQUIRE(f.WaitRegistered("test.qrm.io/a"));
  REQUIRE(f.WaitRegistered("test.qrm.io/broken"));
  const std::map<std::string, double> both = {{"test.qrm.io/a", 1}, {"test.qrm.io/broken", 1}};

  auto shared = host.admission().Admit(Request("p1", "c0", both, "shared_cores"));
  REQUIRE(shared.ok());
  CHECK(shared->skipped_resources == std::vector<std::string>{"test.qrm.io/broken"});
  CHECK(shared->allocation.resources.count("test.qrm.io/a") == 1);

  auto unannotated = Request("p2", "c0", both);
  unannotated.annotations.clear();  // no QoS annotation counts as shared_cores
  CHECK(host.admission().Admit(unannotated).ok());

  auto dedicated = host.admission().Admit(Request("p3", "c0", both, "dedicated_cores"));
  REQUIRE_FALSE(dedicated.ok());
  CHECK(host.state().GetPod("p3") == nullptr);
}

TEST_CASE("re-admission returns the stored result without a second Allocate", "[admission]") {
  HostFixture f;
  Host& host = f.StartHost();
  f.StartPlugin("test.qrm.io/a");
  REQUIRE(f.WaitRegistered("test.qrm.io/a"));
  auto first = host.admission().Admit(Request("p1", "c0", {{"test.qrm.io/a", 1}}));
  REQUIRE(first.ok());
  auto again = host.admission().Admit(Request("p1", "c0", {{"test.qrm.io/a", 1}}));
  REQUIRE(again.ok());
  CHECK(again->readmitted);
  CHECK(again->update == first->update);
  CHECK(f.Calls("test.qrm.io/a", "Allocate") == 1);
}

TEST_CASE("after a host restart plugins re-register and the checkpoint is restored",
          "[admission][restart]") {
  HostFixture f;
  f.StartHost();
  f.StartPlugin("test.qrm.io/rpc", {"--state", f.File("rpc-state.json")});
  f.StartPlugin("test.qrm.io/watched", {"--no-register"});
  REQUIRE(f.WaitRegistered("test.qrm.io/rpc"));
  REQUIRE(f.WaitRegistered("test.qrm.io/watched"));
  auto first = f.host().admission().Admit(
      Request("p1", "c0", {{"test.qrm.io/rpc", 1}, {"test.qrm.io/watched", 1}}));
  REQUIRE(first.ok());

  f.StopHost();
  Host& host = f.StartHost();
  REQUIRE(f.WaitRegistered("test.qrm.io/rpc"));
  REQUIRE(f.WaitRegistered("test.qrm.io/watched"));
  // The device-plugin style plugin re-registered by itself (second Register).
  REQUIRE(WaitFor([&] {
    return host.registry().Find("test.qrm.io/rpc")->style() ==
           registry::RegistrationStyle::kRegisterRpc;
  }));
  auto again = host.admission().Admit(
      Request("p1", "c0", {{"test.qrm.io/rpc", 1}, {"test.qrm.io/watched", 1}}));
  REQUIRE(again.ok());
  CHECK(again->readmitted);
  CHECK(again->update == first->update);
  CHECK(f.Calls("test.qrm.io/rpc", "Allocate") == 1);
  CHECK(f.Calls("test.qrm.io/watched", "Allocate") == 1);
}

TEST_CASE("bad requests are refused with the field and value", "[admission]") {
  HostFixture f;
  Host& host = f.StartHost();
  auto negative = host.admission().Admit(Request("p1", "c0", {{"cpu", -2}}));
  REQUIRE_FALSE(negative.ok());
  CHECK_THAT(negative.status().message(), Catch::Contains("cpu = -2"));
  auto nan = host.admission().Admit(Request("p1", "c0", {{"cpu", std::nan("")}}));
  REQUIRE_FALSE(nan.ok());
  CHECK_THAT(nan.status().message(), Catch::Contains("cpu = nan"));
  auto no_uid = host.admission().Admit(Request("", "c0", {{"cpu", 1}}));
  CHECK(no_uid.status().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace qrm::host::testing

namespace qrm::host::testing {
namespace {

TEST_CASE("the pod scope merges pod-level hints once and gives every container that affinity",
          "[admission][scope]") {
  HostFixture f;
  auto options = f.Options();
  options.admission.scope = topology::Scope::kPod;
  options.admission.policy = topology::Policy::kRestricted;
  Host& host = f.StartHost(options);
  f.StartPlugin("test.qrm.io/a", {"--pod-hints", "--hints", "{0}:n,{1}:p,{0-1}:n"});
  f.StartPlugin("test.qrm.io/b", {"--pod-hints", "--hints", "{1}:p,{0-1}:n"});
  REQUIRE(f.WaitRegistered("test.qrm.io/a"));
  REQUIRE(f.WaitRegistered("test.qrm.io/b"));

  for (const char* container : {"init", "app", "sidecar"}) {
    auto r = Request("p1", container, {{"test.qrm.io/a", 1}, {"test.qrm.io/b", 1}});
    r.pod_resources = {{"test.qrm.io/a", 3}, {"test.qrm.io/b", 3}};
    auto result = host.admission().Admit(r);
    INFO(container << ": " << result.status().ToString());
    REQUIRE(result.ok());
    CHECK(result->allocation.request.hint().nodes_size() == 1);
    CHECK(result->allocation.request.hint().nodes(0) == 1);
    CHECK(result->update.resources.cpuset_mems() == "1");
  }
  // One pod-level merge for the whole pod, no per-container hints.
  CHECK(f.Calls("test.qrm.io/a", "GetPodTopologyHints") == 1);
  CHECK(f.Calls("test.qrm.io/b", "GetPodTopologyHints") == 1);
  CHECK(f.Calls("test.qrm.io/a", "GetTopologyHints") == 0);
  CHECK(f.Calls("test.qrm.io/a", "Allocate") == 3);
  CHECK(host.state().GetPod("p1")->pod_affinity == NumaMask::FromBits(0b10));
}

TEST_CASE("the pod scope rejects a pod whose pod-level hints cannot be aligned",
          "[admission][scope]") {
  HostFixture f;
  auto options = f.Options();
  options.admission.scope = topology::Scope::kPod;
  options.admission.policy = topology::Policy::kRestricted;
  Host& host = f.StartHost(options);
  f.StartPlugin("test.qrm.io/a", {"--pod-hints", "--hints", "{0}:p"});
  f.StartPlugin("test.qrm.io/b", {"--pod-hints", "--hints", "{1}:p"});
  REQUIRE(f.WaitRegistered("test.qrm.io/a"));
  REQUIRE(f.WaitRegistered("test.qrm.io/b"));
  auto result =
      host.admission().Admit(Request("p1", "app", {{"test.qrm.io/a", 1}, {"test.qrm.io/b", 1}}));
  REQUIRE_FALSE(result.ok());
  CHECK_THAT(result.status().message(), Catch::Contains("topology affinity error"));
  CHECK(host.state().GetPod("p1") == nullptr);
  CHECK(f.Calls("test.qrm.io/a", "Allocate") == 0);
}

TEST_CASE("aliased resources reach the plugin of their target, scaled", "[admission]") {
  HostFixture f;
  auto options = f.Options();
  options.admission.resource_aliases["test.qrm.io/reclaimed_millislots"] = {"test.qrm.io/slots",
                                                                            0.001};
  Host& host = f.StartHost(options);
  f.StartPlugin("test.qrm.io/slots");
  REQUIRE(f.WaitRegistered("test.qrm.io/slots"));
  auto result =
      host.admission().Admit(Request("p1", "c0", {{"test.qrm.io/reclaimed_millislots", 2500}}));
  REQUIRE(result.ok());
  CHECK(result->allocation.resources.at("test.qrm.io/slots").allocated_quantity() == 2.5);
  CHECK(result->allocation.request.resource_requests().at("test.qrm.io/slots") == 2.5);
}

}  // namespace
}  // namespace qrm::host::testing

namespace qrm::host::testing {
namespace {

TEST_CASE("a pod stuck on a slow plugin does not hold up other pods", "[admission][concurrency]") {
  HostFixture f;
  auto options = f.Options();
  options.admission.rpc_timeout = std::chrono::milliseconds(3000);
  Host& host = f.StartHost(options);
  f.StartPlugin("test.qrm.io/slow", {"--hang", "Allocate"});
  f.StartPlugin("test.qrm.io/fast");
  REQUIRE(f.WaitRegistered("test.qrm.io/slow"));
  REQUIRE(f.WaitRegistered("test.qrm.io/fast"));

  std::thread stuck([&] {
    (void)host.admission().Admit(Request("slow-pod", "c0", {{"test.qrm.io/slow", 1}}));
  });
  REQUIRE(WaitFor([&] { return f.Calls("test.qrm.io/slow", "Allocate") == 1; }));
  // While slow-pod waits for its deadline, other pods are admitted at once.
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) {
    REQUIRE(host.admission()
                .Admit(Request("fast-" + std::to_string(i), "c0", {{"test.qrm.io/fast", 1}}))
                .ok());
  }
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(1500));
  stuck.join();
  CHECK(host.state().GetPod("slow-pod") == nullptr);
}

}  // namespace
}  // namespace qrm::host::testing
