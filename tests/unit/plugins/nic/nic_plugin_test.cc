// The NIC plugin's answers on fake machines: the design document's example 3, hints,
// bandwidth accounting, NICs on unknown nodes, and bad input.
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "testing/ledger_files.h"
#include "tests/unit/plugins/nic/nic_test_util.h"

namespace qrm::nic {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

using Catch::Contains;
using qrm::testing::TempDir;
using namespace testutil;

constexpr const char* kBw = kNicBandwidthResourceName;
constexpr const char* kNic = kNicResourceName;

TEST_CASE("example 3: two numa-enhancement pods on node 1 share eth1 in netns ns1", "[nic]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  auto plugin = Create(Config(), m.topology);

  for (const char* pod : {"pod1", "pod2"}) {
    auto req = Request(pod, {{"cpu", 10}, {"memory", 20e9}}, {}, "numa-enhancement");
    // The role is NUMA-bound: it gets NIC hints without asking for a NIC.
    const Hints hints = HintsOk(*plugin, req);
    REQUIRE(hints.present);
    CHECK(hints.nodes == std::vector<std::string>{"0", "1"});
    CHECK(hints.preferred == std::vector<bool>{true, true});

    const auto info = AllocateOk(*plugin, WithHint(req, {1}));
    CHECK(info.oci_property_name().empty());
    CHECK_FALSE(info.is_node_resource());
    CHECK_FALSE(info.is_scalar_resource());
    CHECK(info.allocation_result() == "ns1/eth1");
    const std::map<std::string, std::string> envs(info.envs().begin(), info.envs().end());
    CHECK(envs == std::map<std::string, std::string>{{"AFFINITY_NIC_NAME", "eth1"},
                                                     {"AFFINITY_NIC_ADDR_IPV4", "10.0.1.10"},
                                                     {"AFFINITY_NIC_ADDR_IPV6", "fd00:1::10"}});
    const std::map<std::string, std::string> annotations(info.annotations().begin(),
                                                         info.annotations().end());
    CHECK(annotations == std::map<std::string, std::string>{
                             {"kubernetes.io/host-netns-path", m.paths.netns_dir + "/ns1"}});
    REQUIRE(info.resource_hints().hints_size() == 1);
    CHECK(std::vector<uint64_t>(info.resource_hints().hints(0).nodes().begin(),
                                info.resource_hints().hints(0).nodes().end()) ==
          std::vector<uint64_t>{1});
    CHECK(info.resource_hints().hints(0).preferred());
  }
  // Both are recorded on the same NIC.
  const NicState state = plugin->Snapshot();
  CHECK(state.FindAssignment("uid-pod1", "c0")->nic.ToString() == "ns1/eth1");
  CHECK(state.FindAssignment("uid-pod2", "c0")->nic.ToString() == "ns1/eth1");
}

TEST_CASE("a container on node 0 gets eth0 of the root namespace, without the netns annotation",
          "[nic]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  auto plugin = Create(Config(), m.topology);
  const auto info = AllocateOk(*plugin, WithHint(Request("p", {{kNic, 1}}), {0}));
  CHECK(info.allocation_result() == "eth0");
  CHECK(info.envs().at("AFFINITY_NIC_NAME") == "eth0");
  CHECK(info.envs().at("AFFINITY_NIC_ADDR_IPV4") == "10.0.0.10");
  // The link-local fe80:: address of the fake eth0 is never reported.
  CHECK(info.envs().at("AFFINITY_NIC_ADDR_IPV6") == "fd00::10");
  CHECK(info.annotations().empty());
}

TEST_CASE("a hint over both nodes picks the NIC of the lowest node", "[nic]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  auto plugin = Create(Config(), m.topology);
  CHECK(
      AllocateOk(*plugin, WithHint(Request("a", {{kNic, 1}}), {0, 1}, false)).allocation_result() ==
      "eth0");
  // Without any hint (topology policy none) the lowest node too.
  CHECK(AllocateOk(*plugin, Request("b", {{kNic, 1}})).allocation_result() == "eth0");
}

TEST_CASE("a container that wants nothing of the NIC plugin gets no preference and nothing",
          "[nic]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  auto plugin = Create(Config(), m.topology);
  const auto req = Request("plain", {{"cpu", 2}, {"memory", 1e9}});
  CHECK_FALSE(HintsOk(*plugin, req).present);
  auto resp = plugin->Allocate(WithHint(req, {0}));
  REQUIRE(resp.ok());
  CHECK(resp->allocation_result().resource_allocation().empty());
  CHECK(plugin->Snapshot().pods().empty());
  auto all = plugin->GetResourcesAllocation();
  REQUIRE(all.ok());
  CHECK(all->pod_resources().empty());
}

TEST_CASE("containers that want nothing are answered quickly, even while others allocate",
          "[nic][fast]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  auto plugin = Create(Config(dir.File("state")), m.topology);
  const auto plain = Request("plain", {{"cpu", 2}, {"memory", 1e9}},
                             {{"katalyst.kubewharf.io/qos_level", "shared_cores"}});
  // A writer holding the lock for durable writes must not slow the plain answers down.
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int i = 0; !stop; ++i) {
      (void)plugin->Allocate(WithHint(Request(fmt::format("w{}", i), {{kNic, 1}}), {0}));
    }
  });
  constexpr int kCalls = 20000;
  const auto start = std::chrono::steady_clock::now();
  int no_preference = 0;
  for (int i = 0; i < kCalls; ++i) {
    auto r = plugin->GetTopologyHints(plain);
    no_preference += r.ok() && r->resource_hints().empty();
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  stop = true;
  writer.join();
  const double us =
      std::chrono::duration<double, std::micro>(elapsed).count() / static_cast<double>(kCalls);
  CHECK(no_preference == kCalls);
  WARN("GetTopologyHints for a container that wants nothing: " << us << " us per call");
  CHECK(us < 1000);  // generous: the point is that no call waits for a disk write
}

TEST_CASE("bandwidth is never oversubscribed", "[nic][bandwidth]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  NicPluginConfig config = Config();
  config.bandwidth_ratio = 0.8;  // 25000 Mb/s NICs -> 20000 Mb/s each
  auto plugin = Create(config, m.topology);

  auto first = AllocateOk(*plugin, WithHint(Request("a", {{kBw, 15000}}), {0}));
  CHECK(first.allocation_result() == "eth0");
  CHECK(first.is_scalar_resource());
  CHECK(first.allocated_quantity() == 15000);

  // eth0 has 5000 left: only node 1 is hinted now.
  const Hints hints = HintsOk(*plugin, Request("b", {{kBw, 15000}}));
  REQUIRE(hints.present);
  CHECK(hints.nodes == std::vector<std::string>{"1"});
  auto refused = plugin->Allocate(WithHint(Request("b", {{kBw, 15000}}), {0}));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kResourceExhausted);
  CHECK_THAT(refused.status().message(), Contains("15000 Mb/s"));
  CHECK_THAT(refused.status().message(), Contains("eth0(node 0, up, 5000 Mb/s free)"));

  CHECK(AllocateOk(*plugin, WithHint(Request("b", {{kBw, 15000}}), {1})).allocation_result() ==
        "ns1/eth1");
  // Nothing has 15000 left anywhere: an empty list, which means "cannot be satisfied".
  const Hints none = HintsOk(*plugin, Request("c", {{kBw, 15000}}));
  CHECK(none.present);
  CHECK(none.nodes.empty());
  // 5000 still fit on each.
  CHECK(HintsOk(*plugin, Request("c", {{kBw, 5000}})).nodes == std::vector<std::string>{"0", "1"});

  // Releasing gives it back.
  REQUIRE(plugin->RemovePod("uid-a").ok());
  CHECK(HintsOk(*plugin, Request("c", {{kBw, 15000}})).nodes == std::vector<std::string>{"0"});
}

TEST_CASE("concurrent bandwidth requests never exceed a NIC's capacity", "[nic][bandwidth]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  auto plugin = Create(Config(dir.File("state")), m.topology);

  constexpr int kThreads = 4, kPerThread = 10;  // 40 x 1000 Mb/s asked, 25 fit on eth0
  std::atomic<int> granted{0}, exhausted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        auto req = WithHint(Request(fmt::format("p{}-{}", t, i), {{kBw, 1000}}), {0});
        auto r = plugin->Allocate(req);
        if (r.ok()) {
          ++granted;
        } else if (r.status().code() == StatusCode::kResourceExhausted) {
          ++exhausted;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(granted == 25);
  CHECK(exhausted == kThreads * kPerThread - 25);
  const NicState state = plugin->Snapshot();
  CHECK(state.AllocatedMbps({"", "eth0"}) == 25000);
  CHECK(state.AllocatedMbps({"ns1", "eth1"}) == 0);
}

TEST_CASE("NICs on no known node: no preference, and no node in the answer", "[nic][unknown]") {
  TempDir dir;
  // memonly: two nodes, eth0 with numa_node -1 and speed 0 (unknown); brought up here.
  auto shape = machine::fake::MemOnlyShape();
  shape.nics[0].operstate = "up";
  FakeMachine m = Generate(shape, dir);
  REQUIRE(m.topology.nics.size() == 1);
  REQUIRE(m.topology.nics[0].numa_node == -1);
  auto plugin = Create(Config(), m.topology);

  CHECK_FALSE(HintsOk(*plugin, Request("a", {{kNic, 1}})).present);
  const auto info = AllocateOk(*plugin, WithHint(Request("a", {{kNic, 1}}), {1}));
  CHECK(info.allocation_result() == "eth0");
  CHECK(info.resource_hints().hints_size() == 0);

  // Its speed is unknown (0 Mb/s of capacity): bandwidth fits nowhere.
  const Hints bw = HintsOk(*plugin, Request("b", {{kBw, 100}}));
  CHECK(bw.present);
  CHECK(bw.nodes.empty());
  auto refused = plugin->Allocate(Request("b", {{kBw, 100}}));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kResourceExhausted);

  // The pod resources view has no per-node entry for it.
  pb::GetTopologyAwareResourcesRequest q;
  q.set_pod_uid("uid-a");
  q.set_container_name("c0");
  auto topo = plugin->GetTopologyAwareResources(q);
  REQUIRE(topo.ok());
  const auto& r = topo->container_topology_aware_resources().allocated_resources().at(kNic);
  CHECK(r.aggregated_quantity() == 1);
  CHECK(r.topology_aware_quantity_list_size() == 0);
}

TEST_CASE("unknown-nic-speed-mbps gives a NIC of unknown speed its bandwidth", "[nic][unknown]") {
  TempDir dir;
  auto shape = machine::fake::MemOnlyShape();
  shape.nics[0].operstate = "up";
  FakeMachine m = Generate(shape, dir, /*unknown_nic_speed_mbps=*/10000);
  auto plugin = Create(Config(), m.topology);
  // Fits, on a NIC of no known node: no preference.
  CHECK_FALSE(HintsOk(*plugin, Request("a", {{kBw, 6000}})).present);
  CHECK(AllocateOk(*plugin, Request("a", {{kBw, 6000}})).allocated_quantity() == 6000);
  CHECK(HintsOk(*plugin, Request("b", {{kBw, 6000}})).nodes.empty());
}

TEST_CASE("a NUMA-bound container with no NIC next to it is admitted without one", "[nic]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  NicPluginConfig config = Config();
  config.allowlist = {"eth0"};  // nothing on node 1
  auto plugin = Create(config, m.topology);
  auto resp = plugin->Allocate(WithHint(Request("p", {}, {}, "numa-enhancement"), {1}));
  REQUIRE(resp.ok());
  CHECK(resp->allocation_result().resource_allocation().empty());
  // Asked for explicitly, the same is refused.
  auto refused = plugin->Allocate(WithHint(Request("q", {{kNic, 1}}), {1}));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kResourceExhausted);
  CHECK_THAT(refused.status().message(), Contains("NUMA nodes 1"));
}

TEST_CASE("a NIC that is down is not offered", "[nic]") {
  TempDir dir;
  auto shape = machine::fake::Doc80Shape();
  shape.nics[0].operstate = "down";
  FakeMachine m = Generate(shape, dir);
  auto plugin = Create(Config(), m.topology);
  CHECK(HintsOk(*plugin, Request("p", {{kNic, 1}})).nodes == std::vector<std::string>{"1"});
}

TEST_CASE("topology-aware answers: the NIC by name and node, bandwidth per node", "[nic]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  NicPluginConfig config = Config();
  config.bandwidth_ratio = 0.5;
  auto plugin = Create(config, m.topology);
  AllocateOk(*plugin, WithHint(Request("p", {{kBw, 3000}}), {1}));

  pb::GetTopologyAwareResourcesRequest q;
  q.set_pod_uid("uid-p");
  q.set_container_name("c0");
  auto topo = plugin->GetTopologyAwareResources(q);
  REQUIRE(topo.ok());
  CHECK(topo->pod_name() == "p");
  const auto& res = topo->container_topology_aware_resources().allocated_resources();
  const auto& device = res.at(kNic);
  REQUIRE(device.topology_aware_quantity_list_size() == 1);
  CHECK(device.topology_aware_quantity_list(0).name() == "ns1/eth1");
  CHECK(device.topology_aware_quantity_list(0).node() == 1);
  const auto& bw = res.at(kBw);
  CHECK(bw.is_scalar_resource());
  CHECK(bw.aggregated_quantity() == 3000);
  CHECK(bw.topology_aware_quantity_list(0).node() == 1);

  q.set_pod_uid("uid-nobody");
  CHECK(plugin->GetTopologyAwareResources(q).status().code() == StatusCode::kNotFound);

  auto alloc = plugin->GetTopologyAwareAllocatableResources();
  REQUIRE(alloc.ok());
  const auto& devices = alloc->allocatable_resources().at(kNic);
  CHECK(devices.aggregated_capacity_quantity() == 2);
  REQUIRE(devices.topology_aware_capacity_quantity_list_size() == 2);
  CHECK(devices.topology_aware_capacity_quantity_list(0).name() == "eth0");
  CHECK(devices.topology_aware_capacity_quantity_list(1).name() == "ns1/eth1");
  CHECK(devices.topology_aware_capacity_quantity_list(1).node() == 1);
  const auto& bandwidth = alloc->allocatable_resources().at(kBw);
  CHECK(bandwidth.aggregated_capacity_quantity() == 50000);
  CHECK(bandwidth.aggregated_allocatable_quantity() == 25000);
  REQUIRE(bandwidth.topology_aware_allocatable_quantity_list_size() == 2);
  CHECK(bandwidth.topology_aware_allocatable_quantity_list(1).node() == 1);
  CHECK(bandwidth.topology_aware_allocatable_quantity_list(1).resource_value() == 12500);
}

TEST_CASE("bad requests are refused naming the key and value, and change nothing", "[nic][bad]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  auto plugin = Create(Config(dir.File("state")), m.topology);
  AllocateOk(*plugin, WithHint(Request("keep", {{kBw, 100}}), {0}));
  const std::string files_before =
      qrm::testing::LedgerFileBytes(dir.File("state/nic_plugin_state"));

  struct Case {
    const char* what;
    pb::ResourceRequest req;
    std::vector<std::string> mentions;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<Case> cases = {
      {"negative bandwidth", Request("bad", {{kBw, -5}}), {"qrm.io/nic-bandwidth", "-5"}},
      {"NaN bandwidth", Request("bad", {{kBw, nan}}), {"qrm.io/nic-bandwidth", "nan"}},
      {"absurd bandwidth",
       Request("bad", {{kBw, 1e15}}),
       {"qrm.io/nic-bandwidth", "1000000000000000"}},
      {"fractional bandwidth", Request("bad", {{kBw, 2.5}}), {"qrm.io/nic-bandwidth", "2.5"}},
      {"two NICs", Request("bad", {{kNic, 2}}), {"qrm.io/nic", "2"}},
      {"unknown qos level",
       Request("bad", {{kNic, 1}}, {{"katalyst.kubewharf.io/qos_level", "gold_cores"}}),
       {"katalyst.kubewharf.io/qos_level", "gold_cores"}},
      {"malformed memory_enhancement",
       Request("bad", {{kNic, 1}}, {{"katalyst.kubewharf.io/memory_enhancement", "{numa"}}),
       {"katalyst.kubewharf.io/memory_enhancement", "{numa"}},
      {"unknown role",
       Request("bad", {{kNic, 1}}, {}, "db-master"),
       {"kubernetes.io/pod-role", "db-master"}},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    for (bool allocate : {false, true}) {
      const Status s = allocate ? plugin->Allocate(WithHint(c.req, {0})).status()
                                : plugin->GetTopologyHints(c.req).status();
      CHECK(s.code() == StatusCode::kInvalidArgument);
      for (const std::string& mention : c.mentions) CHECK_THAT(s.message(), Contains(mention));
    }
  }
  // A hint naming a node the machine does not have.
  auto bad_hint = plugin->Allocate(WithHint(Request("bad", {{kNic, 1}}), {7}));
  CHECK(bad_hint.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(bad_hint.status().message(), Contains("hint.nodes \"7\""));

  CHECK(plugin->Snapshot().Pod("uid-bad") == nullptr);
  CHECK(plugin->Snapshot().AllocatedMbps({"", "eth0"}) == 100);
  CHECK(qrm::testing::LedgerFileBytes(dir.File("state/nic_plugin_state")) == files_before);
}

TEST_CASE("Allocate is idempotent for a container that already has its NIC", "[nic]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  auto plugin = Create(Config(), m.topology);
  const auto first = AllocateOk(*plugin, WithHint(Request("p", {{kBw, 1000}}), {1}));
  // Replayed with another hint: the same answer, bandwidth taken once.
  const auto again = AllocateOk(*plugin, WithHint(Request("p", {{kBw, 1000}}), {0}));
  CHECK(again.allocation_result() == first.allocation_result());
  CHECK(plugin->Snapshot().AllocatedMbps({"ns1", "eth1"}) == 1000);
  // And its hints are where it is.
  CHECK(HintsOk(*plugin, Request("p", {{kBw, 1000}})).nodes == std::vector<std::string>{"1"});
}

}  // namespace
}  // namespace qrm::nic
