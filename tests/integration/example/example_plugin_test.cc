// The example plugin (qrm-example-accel-plugin) as a real process, registered
// with an in-process host on a 2-node machine with 4 slots per node.
#include <google/protobuf/util/message_differencer.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "tests/integration/host/host_fixture.h"

namespace qrm::host::testing {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

using Catch::Contains;

constexpr const char* kRes = "example.qrm.io/accel-slots";
constexpr std::chrono::seconds kRpc{2};

class ExampleFixture : public HostFixture {
 public:
  ~ExampleFixture() { StopHost(); }  // the host goes first, then the plugin

  std::string state_dir() const { return File("accel-state"); }

  // HostFixture::StartPlugin runs qrm-test-plugin; the example has flags of its own.
  void StartExample() {
    example_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{QRM_EXAMPLE_PLUGIN, "--plugin-dir", plugin_dir(), "--numa-nodes",
                                 "0-1", "--slots-per-node", "4", "--state-dir", state_dir()},
        File("example.log"));
  }
  // SIGTERM, as a kubelet or systemd would; returns the wait status.
  int StopExample() { return example_->Kill(SIGTERM); }
  void KillExample() { example_->Kill(SIGKILL); }

  // Host, then the plugin, registered.
  void Start() {
    StartHost();
    StartExample();
    REQUIRE(WaitRegistered(kRes));
  }

  std::shared_ptr<registry::PluginEndpoint> Endpoint() { return host().registry().Find(kRes); }

  pb::GetResourcesAllocationResponse Allocations() {
    auto r = Endpoint()->GetResourcesAllocation(kRpc);
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    return *r;
  }
  pb::AllocatableTopologyAwareResource Allocatable() {
    auto r = Endpoint()->GetTopologyAwareAllocatableResources(kRpc);
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    return r->allocatable_resources().at(kRes);
  }
  // Slots no container holds: allocatable (which never shrinks) minus what the plugin reports
  // allocated, as a tool would work it out.
  double Free() {
    double allocated = 0;
    const pb::GetResourcesAllocationResponse held = Allocations();
    for (const auto& [uid, pod] : held.pod_resources()) {
      for (const auto& [name, container] : pod.container_resources()) {
        auto it = container.resource_allocation().find(kRes);
        if (it != container.resource_allocation().end())
          allocated += it->second.allocated_quantity();
      }
    }
    return Allocatable().aggregated_allocatable_quantity() - allocated;
  }

 private:
  std::unique_ptr<ChildProcess> example_;
};

TEST_CASE("the example plugin registers with its options and capacity", "[example]") {
  ExampleFixture f;
  f.Start();
  auto endpoint = f.Endpoint();
  CHECK(endpoint->options().with_topology_alignment());
  CHECK_FALSE(endpoint->options().need_reconcile());
  CHECK_FALSE(endpoint->options().pre_start_required());
  CHECK(endpoint->socket_path() == f.plugin_dir() + "/example.qrm.io_accel-slots.sock");
  const auto a = f.Allocatable();
  CHECK(a.aggregated_capacity_quantity() == 8);
  CHECK(a.aggregated_allocatable_quantity() == 8);
  REQUIRE(a.topology_aware_capacity_quantity_list_size() == 2);
  CHECK(a.topology_aware_capacity_quantity_list(1).node() == 1);
  CHECK(a.topology_aware_capacity_quantity_list(1).resource_value() == 4);
  CHECK(f.host().AggregateAllocatable().count(kRes) == 1);
}

TEST_CASE("three slots land on one node, with envs and annotation", "[example]") {
  ExampleFixture f;
  f.Start();
  auto r = f.host().admission().Admit(Request("p1", "c0", {{kRes, 3}}));
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  // The preferred single-node hint {0} won the merge.
  const auto& hint = r->allocation.request.hint();
  REQUIRE(hint.nodes_size() == 1);
  CHECK(hint.nodes(0) == 0);
  CHECK(hint.preferred());
  const auto& info = r->allocation.resources.at(kRes);
  CHECK(info.allocation_result() == "node0:3");
  CHECK(info.allocated_quantity() == 3);
  CHECK(r->update.envs.at("ACCEL_SLOTS") == "3");
  CHECK(r->update.envs.at("ACCEL_NUMA_NODES") == "0");
  CHECK(r->update.annotations.at(kRes) == "node0:3");
  CHECK(r->update.owned.empty());  // no cgroup field is the example's
  CHECK(f.host().state().GetContainer("p1", "c0") != nullptr);
  CHECK(f.Free() == 5);
  CHECK(f.Allocatable().aggregated_allocatable_quantity() == 8);  // never shrinks
}

TEST_CASE("with node 0 full, the next three slots land on node 1", "[example]") {
  ExampleFixture f;
  f.Start();
  auto full = f.host().admission().Admit(Request("p1", "c0", {{kRes, 4}}));
  REQUIRE(full.ok());
  CHECK(full->allocation.resources.at(kRes).allocation_result() == "node0:4");
  auto next = f.host().admission().Admit(Request("p2", "c0", {{kRes, 3}}));
  INFO(next.status().ToString());
  REQUIRE(next.ok());
  CHECK(next->allocation.resources.at(kRes).allocation_result() == "node1:3");
  CHECK(next->update.envs.at("ACCEL_NUMA_NODES") == "1");
  CHECK(next->allocation.request.hint().preferred());
}

TEST_CASE("five slots only fit across both nodes", "[example]") {
  ExampleFixture f;
  f.Start();
  auto r = f.host().admission().Admit(Request("p1", "c0", {{kRes, 5}}));
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  const auto& hint = r->allocation.request.hint();
  CHECK(hint.nodes_size() == 2);
  CHECK(hint.preferred());
  CHECK(r->allocation.resources.at(kRes).allocation_result() == "node0:4,node1:1");
  CHECK(r->update.envs.at("ACCEL_NUMA_NODES") == "0-1");
  CHECK(r->update.envs.at("ACCEL_SLOTS") == "5");
}

TEST_CASE("a request above what is free is refused and leaves nothing", "[example]") {
  ExampleFixture f;
  f.Start();
  REQUIRE(f.host().admission().Admit(Request("p1", "c0", {{kRes, 6}})).ok());
  auto r = f.host().admission().Admit(Request("p2", "c0", {{kRes, 3}}));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kResourceExhausted);
  CHECK_THAT(r.status().message(), Contains("free: node0=0 node1=2"));
  CHECK(f.host().state().GetPod("p2") == nullptr);
  CHECK(f.Allocations().pod_resources().count("p2") == 0);
  CHECK(f.Free() == 2);

  // More than the machine has is a bad request, refused before any Allocate.
  auto huge = f.host().admission().Admit(Request("p3", "c0", {{kRes, 9}}));
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(huge.status().message(),
             Contains("resource_requests[\"example.qrm.io/accel-slots\"] = 9"));
  CHECK(f.host().state().GetPod("p3") == nullptr);
}

TEST_CASE("RemovePod through the host frees the slots", "[example]") {
  ExampleFixture f;
  f.Start();
  REQUIRE(f.host().admission().Admit(Request("p1", "c0", {{kRes, 3}})).ok());
  REQUIRE(f.host().admission().Admit(Request("p1", "c1", {{kRes, 2}})).ok());
  CHECK(f.Free() == 3);
  REQUIRE(f.host().admission().RemovePod("p1").ok());
  CHECK(f.Free() == 8);
  CHECK(f.Allocations().pod_resources().empty());
  CHECK(f.host().state().GetPod("p1") == nullptr);
}

TEST_CASE("a restarted plugin restores its allocations from its state file", "[example]") {
  ExampleFixture f;
  f.Start();
  REQUIRE(f.host().admission().Admit(Request("p1", "c0", {{kRes, 3}})).ok());
  REQUIRE(f.host().admission().Admit(Request("p2", "c0", {{kRes, 4}})).ok());
  const auto before = f.Allocations();
  auto old_endpoint = f.Endpoint();

  const int status = f.StopExample();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  struct stat st {};
  CHECK(::stat((f.plugin_dir() + "/example.qrm.io_accel-slots.sock").c_str(), &st) != 0);
  REQUIRE(WaitFor([&] { return old_endpoint->stopped(); }));

  f.StartExample();
  REQUIRE(WaitFor([&] {
    auto e = f.Endpoint();
    return e != nullptr && e != old_endpoint && !e->stopped();
  }));
  const auto after = f.Allocations();
  CHECK(google::protobuf::util::MessageDifferencer::Equals(before, after));
  CHECK(f.Free() == 1);
  // And the restored slots are really held.
  auto r = f.host().admission().Admit(Request("p3", "c0", {{kRes, 2}}));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kResourceExhausted);
}

TEST_CASE("a restarted plugin that lost its state gets the running containers back first",
          "[example][replay]") {
  // The example does not set need_reconcile: the replay at registration must reach it anyway.
  ExampleFixture f;
  f.Start();
  REQUIRE_FALSE(f.Endpoint()->options().need_reconcile());
  f.view().AddContainer({"a", "pod-a", "default", "c0"});
  auto a = f.host().admission().Admit(Request("a", "c0", {{kRes, 3}}));
  REQUIRE(a.ok());
  const std::string a_slots = a->allocation.resources.at(kRes).allocation_result();
  auto old_endpoint = f.Endpoint();

  // Killed, and its state file lost with it.
  f.KillExample();
  REQUIRE(::unlink((f.state_dir() + "/accel-slots.json").c_str()) == 0);
  f.StartExample();
  REQUIRE(WaitFor([&] {
    auto e = f.Endpoint();
    return e != nullptr && e != old_endpoint && !e->stopped();
  }));
  // Registered means replayed: a new pod cannot get A's slots.
  auto b = f.host().admission().Admit(Request("b", "c0", {{kRes, 3}}));
  REQUIRE(b.ok());
  const std::string b_slots = b->allocation.resources.at(kRes).allocation_result();
  INFO("a=" << a_slots << " b=" << b_slots);
  CHECK(b_slots != a_slots);
  const auto held = f.Allocations();
  REQUIRE(held.pod_resources().contains("a"));
  CHECK(held.pod_resources()
            .at("a")
            .container_resources()
            .at("c0")
            .resource_allocation()
            .at(kRes)
            .allocation_result() == a_slots);
  CHECK(held.pod_resources().contains("b"));
  CHECK(f.Free() == 2);
  CHECK(f.host().state().GetContainer("a", "c0")->resources.at(kRes).allocation_result() ==
        a_slots);
}

}  // namespace
}  // namespace qrm::host::testing
