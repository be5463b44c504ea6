// The memory plugin's answers on fake machines: the design document's example 2, hints on
// several shapes, release, unbound containers, and bad input.
#include <chrono>
#include <cmath>
#include <limits>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "tests/unit/plugins/memory/memory_test_util.h"

namespace qrm::memory {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

using Catch::Contains;
using qrm::testing::TempDir;
using namespace testutil;

constexpr uint64_t kDocNode0 = 237706936320ULL;
constexpr uint64_t kDocNode1 = 237806551040ULL;
constexpr uint64_t kReserved = 524288000ULL;  // 500Mi

std::string Str(const rapidjson::Value& v) {
  return {v.GetString(), v.GetStringLength()};
}

TEST_CASE("example 2: the document's machine state, then storage-service and reranker",
          "[memory][example2]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  auto plugin = Create(Config(dir.File("state")), m.topology);

  // The initial snapshot's view holds exactly the document's numbers.
  const std::string file = dir.File("state/memory_plugin_state");
  {
    const rapidjson::Document data = SnapshotData(file);
    const rapidjson::Value& memory = data["machineState"]["memory"];
    CHECK(Str(memory["0"]["Allocated"]) == "0");
    CHECK(Str(memory["0"]["allocatable"]) == "237182648320");
    CHECK(Str(memory["0"]["free"]) == "237182648320");
    CHECK(Str(memory["0"]["systemReserved"]) == "524288000");
    CHECK(Str(memory["0"]["total"]) == "237706936320");
    CHECK(memory["0"]["pod_entries"].ObjectEmpty());
    CHECK(Str(memory["1"]["allocatable"]) == "237282263040");
    CHECK(Str(memory["1"]["free"]) == "237282263040");
    CHECK(Str(memory["1"]["total"]) == "237806551040");
    CHECK(data["pods"].ObjectEmpty());
  }

  // pod1, storage-service, 40 GiB: either node alone fits.
  const auto pod1 = Request("pod1", 40.0 * kGiB, "storage-service");
  CHECK(HintsOk(*plugin, pod1).list == std::vector<std::string>{"0", "1", "0-1*"});
  const auto info1 = AllocateOk(*plugin, WithHint(pod1, {0}));
  CHECK(info1.oci_property_name() == "CpusetMems");
  CHECK(info1.allocation_result() == "0");
  CHECK(info1.is_scalar_resource());
  CHECK_FALSE(info1.is_node_resource());
  CHECK(info1.allocated_quantity() == 40.0 * kGiB);
  REQUIRE(info1.resource_hints().hints_size() == 1);
  CHECK(info1.resource_hints().hints(0).nodes_size() == 1);
  CHECK(info1.resource_hints().hints(0).nodes(0) == 0);
  CHECK(info1.resource_hints().hints(0).preferred());

  // pod2, reranker, 20 GiB: anti-affine to storage-service, so node 1 only.
  const auto pod2 = Request("pod2", 20.0 * kGiB, "reranker");
  CHECK(HintsOk(*plugin, pod2).list == std::vector<std::string>{"1"});
  auto wrong = plugin->Allocate(WithHint(pod2, {0}));
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.status().code() == StatusCode::kResourceExhausted);
  CHECK_THAT(wrong.status().message(), Contains("anti-affine to role \"reranker\""));
  const auto info2 = AllocateOk(*plugin, WithHint(pod2, {1}));
  CHECK(info2.allocation_result() == "1");
  CHECK(info2.allocated_quantity() == 20.0 * kGiB);

  const MemoryState state = plugin->Snapshot();
  CHECK(state.FreeOn(0) == kDocNode0 - kReserved - 40 * kGiB);
  CHECK(state.FreeOn(1) == kDocNode1 - kReserved - 20 * kGiB);

  // The journal holds both containers; a snapshot (as at a clean stop) shows them per node.
  const rapidjson::Document entry = LedgerEntry(file, "uid-pod2", "c0");
  REQUIRE(entry.IsObject());
  CHECK(Str(entry["quantity"]) == std::to_string(20 * kGiB));
  CHECK(Str(entry["numa_nodes"]) == "1");
  CHECK(Str(entry["node_bytes"]) == "1=" + std::to_string(20 * kGiB));
  CHECK(Str(entry["role"]) == "reranker");
  REQUIRE(plugin->WriteSnapshot().ok());
  const rapidjson::Document data = SnapshotData(file);
  const rapidjson::Value& memory = data["machineState"]["memory"];
  CHECK(Str(memory["0"]["Allocated"]) == std::to_string(40 * kGiB));
  CHECK(Str(memory["0"]["free"]) == std::to_string(237182648320ULL - 40 * kGiB));
  CHECK(Str(memory["0"]["pod_entries"]["uid-pod1"]["c0"]) == std::to_string(40 * kGiB));
  CHECK(Str(memory["1"]["pod_entries"]["uid-pod2"]["c0"]) == std::to_string(20 * kGiB));
  CHECK(Str(data["settings"]["numa_nodes"]) == "0-1");
}

TEST_CASE("allocatable and capacity per NUMA node", "[memory]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  auto plugin = Create(Config(), m.topology);
  AllocateOk(*plugin, WithHint(Request("p", 8.0 * kGiB, "reranker"), {1}));

  auto r = plugin->GetTopologyAwareAllocatableResources();
  REQUIRE(r.ok());
  const auto& mem = r->allocatable_resources().at("memory");
  CHECK(mem.is_scalar_resource());
  CHECK_FALSE(mem.is_node_resource());
  REQUIRE(mem.topology_aware_allocatable_quantity_list_size() == 2);
  CHECK(mem.topology_aware_allocatable_quantity_list(0).resource_value() == 237182648320.0);
  CHECK(mem.topology_aware_allocatable_quantity_list(1).resource_value() == 237282263040.0);
  CHECK(mem.topology_aware_allocatable_quantity_list(1).node() == 1);
  CHECK(mem.topology_aware_capacity_quantity_list(0).resource_value() ==
        static_cast<double>(kDocNode0));
  CHECK(mem.aggregated_capacity_quantity() == static_cast<double>(kDocNode0 + kDocNode1));
  CHECK(mem.aggregated_allocatable_quantity() == 237182648320.0 + 237282263040.0);

  pb::GetTopologyAwareResourcesRequest q;
  q.set_pod_uid("uid-p");
  q.set_container_name("c0");
  auto t = plugin->GetTopologyAwareResources(q);
  REQUIRE(t.ok());
  const auto& res = t->container_topology_aware_resources().allocated_resources().at("memory");
  CHECK(res.aggregated_quantity() == 8.0 * kGiB);
  REQUIRE(res.topology_aware_quantity_list_size() == 1);
  CHECK(res.topology_aware_quantity_list(0).node() == 1);
  CHECK(res.topology_aware_quantity_list(0).resource_value() == 8.0 * kGiB);
  q.set_container_name("other");
  CHECK(plugin->GetTopologyAwareResources(q).status().code() == StatusCode::kNotFound);
}

TEST_CASE("RemovePod releases the pod's memory on its nodes", "[memory]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  auto plugin = Create(Config(dir.File("state")), m.topology);
  AllocateOk(*plugin, WithHint(Request("a", 100.0 * kGiB, "reranker"), {0}));
  AllocateOk(*plugin, WithHint(Request("a", 50.0 * kGiB, "reranker", {}, "sidecar"), {0}));
  AllocateOk(*plugin, Request("web", 3.0 * kGiB, "web"));
  CHECK(plugin->Snapshot().FreeOn(0) == kDocNode0 - kReserved - 150 * kGiB);

  REQUIRE(plugin->RemovePod("uid-a").ok());
  const MemoryState state = plugin->Snapshot();
  CHECK(state.FreeOn(0) == kDocNode0 - kReserved);
  CHECK(state.Pod("uid-a") == nullptr);
  CHECK(state.UnboundBytes() == 3 * kGiB);
  auto all = plugin->GetResourcesAllocation();
  REQUIRE(all.ok());
  CHECK(all->pod_resources().size() == 1);
  CHECK(all->pod_resources().count("uid-web") == 1);
  // Unknown pods are fine to remove.
  CHECK(plugin->RemovePod("uid-never").ok());

  const std::string file = dir.File("state/memory_plugin_state");
  CHECK(LedgerEntry(file, "uid-a", "c0").IsNull());
  CHECK(LedgerEntry(file, "uid-web", "c0").IsObject());
  REQUIRE(plugin->WriteSnapshot().ok());
  CHECK(Str(SnapshotData(file)["machineState"]["memory"]["0"]["Allocated"]) == "0");
}

TEST_CASE("an unbound container: no preference, recorded outside any node", "[memory]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  auto plugin = Create(Config(), m.topology);
  const auto req = Request("web", 6.0 * kGiB, "web");
  CHECK_FALSE(HintsOk(*plugin, req).present);
  const auto info = AllocateOk(*plugin, WithHint(req, {0, 1}, false));
  CHECK(info.oci_property_name().empty());
  CHECK(info.allocation_result().empty());
  CHECK(info.is_scalar_resource());
  CHECK(info.allocated_quantity() == 6.0 * kGiB);
  CHECK(info.resource_hints().hints_size() == 0);
  const MemoryState state = plugin->Snapshot();
  CHECK(state.UnboundBytes() == 6 * kGiB);
  CHECK(state.AllocatedOn(0) == 0);
  CHECK(state.AllocatedOn(1) == 0);
  // No annotation at all is shared_cores: unbound too. A request without memory: nothing.
  CHECK_FALSE(HintsOk(*plugin, Request("plain", 1.0 * kGiB)).present);
  pb::ResourceRequest none = Request("none", 0);
  none.mutable_resource_requests()->clear();
  auto resp = plugin->Allocate(none);
  REQUIRE(resp.ok());
  CHECK(resp->allocation_result().resource_allocation().empty());
}

TEST_CASE("katalyst memory_enhancement binds a container to NUMA nodes", "[memory]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  auto plugin = Create(Config(), m.topology);
  const auto req =
      Request("k", 10.0 * kGiB, "",
              {{"katalyst.kubewharf.io/qos_level", "dedicated_cores"},
               {"katalyst.kubewharf.io/memory_enhancement", R"({"numa_binding":"true"})"}});
  CHECK(HintsOk(*plugin, req).list == std::vector<std::string>{"0", "1", "0-1*"});
  CHECK(AllocateOk(*plugin, WithHint(req, {1})).allocation_result() == "1");
}

TEST_CASE("hints on 4x32smt: single nodes when one fits, else the narrowest sets",
          "[memory][hints]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::FourBy32SmtShape(), dir);
  auto plugin = Create(Config(), m.topology);
  // 64 GiB per node minus 500Mi reserved.
  const Hints small = HintsOk(*plugin, Request("a", 32.0 * kGiB, "reranker"));
  REQUIRE(small.list.size() == 15);  // every subset of 4 nodes fits
  CHECK(std::vector<std::string>(small.list.begin(), small.list.begin() + 5) ==
        std::vector<std::string>{"0", "1", "2", "3", "0-1*"});
  CHECK(small.list.back() == "0-3*");

  const Hints pairs = HintsOk(*plugin, Request("b", 100.0 * kGiB, "reranker"));
  CHECK(pairs.list == std::vector<std::string>{"0-1", "0,2", "1-2", "0,3", "1,3", "2-3", "0-2*",
                                               "0-1,3*", "0,2-3*", "1-3*", "0-3*"});

  // After 60 GiB on node 0, 32 GiB fit only on nodes 1-3 alone.
  AllocateOk(*plugin, WithHint(Request("c", 60.0 * kGiB, "reranker"), {0}));
  const Hints after = HintsOk(*plugin, Request("d", 32.0 * kGiB, "reranker"));
  CHECK(std::vector<std::string>(after.list.begin(), after.list.begin() + 4) ==
        std::vector<std::string>{"1", "2", "3", "0-1*"});

  // 300 GiB fit nowhere: an empty list, and Allocate refuses.
  const Hints none = HintsOk(*plugin, Request("e", 300.0 * kGiB, "reranker"));
  CHECK(none.present);
  CHECK(none.list.empty());
  auto refused = plugin->Allocate(WithHint(Request("e", 300.0 * kGiB, "reranker"), {0, 1, 2, 3}));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kResourceExhausted);
  CHECK_THAT(refused.status().message(), Contains("do not fit on NUMA nodes \"0-3\""));
}

TEST_CASE("hints on memonly: the memory-only node counts", "[memory][hints]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::MemOnlyShape(), dir);
  auto plugin = Create(Config(), m.topology);
  // node 0: 32 GiB (with CPUs), node 1: 64 GiB (no CPUs).
  CHECK(HintsOk(*plugin, Request("a", 40.0 * kGiB, "reranker")).list ==
        std::vector<std::string>{"1", "0-1*"});
  CHECK(HintsOk(*plugin, Request("b", 90.0 * kGiB, "reranker")).list ==
        std::vector<std::string>{"0-1"});

  // 90 GiB over both: node 0 is filled first, the rest goes to node 1.
  const auto info = AllocateOk(*plugin, WithHint(Request("b", 90.0 * kGiB, "reranker"), {0, 1}));
  CHECK(info.allocation_result() == "0-1");
  const uint64_t node0 = 32 * kGiB - kReserved;
  CHECK(info.topology_assignments().at(0) == node0);
  CHECK(info.topology_assignments().at(1) == 90 * kGiB - node0);
  CHECK(plugin->Snapshot().FreeOn(0) == 0);
}

TEST_CASE("numa_exclusive: a node to itself, and nobody else's", "[memory][hints]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::FourBy32SmtShape(), dir);
  auto plugin = Create(Config(), m.topology);
  AllocateOk(*plugin, WithHint(Request("r", 1.0 * kGiB, "reranker"), {1}));
  // The exclusive database avoids node 1 (held by another NUMA-bound pod).
  const Hints db = HintsOk(*plugin, Request("db", 10.0 * kGiB, "database"));
  CHECK(std::vector<std::string>(db.list.begin(), db.list.begin() + 3) ==
        std::vector<std::string>{"0", "2", "3"});
  for (const std::string& h : db.list) CHECK(h.find('1') == std::string::npos);
  auto refused = plugin->Allocate(WithHint(Request("db", 10.0 * kGiB, "database"), {1}));
  CHECK(refused.status().code() == StatusCode::kResourceExhausted);
  AllocateOk(*plugin, WithHint(Request("db", 10.0 * kGiB, "database"), {0}));
  // ... and nobody NUMA-bound goes to node 0 now, except the database's own containers.
  const Hints other = HintsOk(*plugin, Request("x", 1.0 * kGiB, "reranker"));
  CHECK(std::vector<std::string>(other.list.begin(), other.list.begin() + 3) ==
        std::vector<std::string>{"1", "2", "3"});
  CHECK(HintsOk(*plugin, Request("db", 1.0 * kGiB, "database", {}, "c1")).list.front() == "0");
  // Unbound containers are not affected.
  AllocateOk(*plugin, Request("web", 1.0 * kGiB, "web"));
}

TEST_CASE("bad requests are refused naming the key and value, and change nothing",
          "[memory][bad]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  auto plugin = Create(Config(dir.File("state")), m.topology);
  AllocateOk(*plugin, WithHint(Request("keep", 1.0 * kGiB, "reranker"), {0}));
  const std::string files_before = LedgerFileBytes(dir.File("state/memory_plugin_state"));
  const double absurd = static_cast<double>(kDocNode0 + kDocNode1) * 1024 * 2;

  struct Case {
    const char* what;
    pb::ResourceRequest req;
    std::vector<std::string> mentions;
  };
  const std::vector<Case> cases = {
      {"negative", Request("bad", -1, "reranker"), {"\"memory\"", "-1"}},
      {"NaN",
       Request("bad", std::numeric_limits<double>::quiet_NaN(), "reranker"),
       {"\"memory\"", "nan"}},
      {"infinite",
       Request("bad", std::numeric_limits<double>::infinity(), "reranker"),
       {"\"memory\"", "inf"}},
      {"absurd", Request("bad", absurd, "reranker"), {"\"memory\"", fmt::format("{}", absurd)}},
      {"unknown qos level",
       Request("bad", 1e9, "", {{"katalyst.kubewharf.io/qos_level", "gold_cores"}}),
       {"katalyst.kubewharf.io/qos_level", "gold_cores"}},
      {"malformed memory_enhancement",
       Request("bad", 1e9, "", {{"katalyst.kubewharf.io/memory_enhancement", "[true]"}}),
       {"katalyst.kubewharf.io/memory_enhancement", "[true]"}},
      {"unknown role", Request("bad", 1e9, "db-master"), {"kubernetes.io/pod-role", "db-master"}},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    for (bool allocate : {false, true}) {
      const Status s = allocate ? plugin->Allocate(WithHint(c.req, {1})).status()
                                : plugin->GetTopologyHints(c.req).status();
      CHECK(s.code() == StatusCode::kInvalidArgument);
      for (const std::string& mention : c.mentions) CHECK_THAT(s.message(), Contains(mention));
    }
  }
  auto bad_hint = plugin->Allocate(WithHint(Request("bad", 1e9, "reranker"), {5}));
  CHECK(bad_hint.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(bad_hint.status().message(), Contains("hint.nodes \"5\""));

  const MemoryState state = plugin->Snapshot();
  CHECK(state.Pod("uid-bad") == nullptr);
  CHECK(state.AllocatedOn(0) == 1 * kGiB);
  CHECK(state.AllocatedOn(1) == 0);
  CHECK(LedgerFileBytes(dir.File("state/memory_plugin_state")) == files_before);
}

TEST_CASE("Allocate is idempotent, and hints follow what a container holds", "[memory]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  auto plugin = Create(Config(), m.topology);
  const auto req = Request("p", 10.0 * kGiB, "reranker");
  AllocateOk(*plugin, WithHint(req, {1}));
  CHECK(AllocateOk(*plugin, WithHint(req, {0})).allocation_result() == "1");
  CHECK(plugin->Snapshot().AllocatedOn(1) == 10 * kGiB);
  CHECK(plugin->Snapshot().AllocatedOn(0) == 0);
  CHECK(HintsOk(*plugin, req).list == std::vector<std::string>{"1"});
}

TEST_CASE("without a hint, a NUMA-bound container gets the narrowest preferred set", "[memory]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::MemOnlyShape(), dir);
  auto plugin = Create(Config(), m.topology);
  CHECK(AllocateOk(*plugin, Request("a", 40.0 * kGiB, "reranker")).allocation_result() == "1");
  // A NUMA-bound container asking for no memory still gets the host's nodes as cpuset.mems.
  const auto zero = AllocateOk(*plugin, WithHint(Request("z", 0, "reranker"), {0}));
  CHECK(zero.allocation_result() == "0");
  CHECK(zero.allocated_quantity() == 0);
}

TEST_CASE("many durable allocations and releases keep exact accounting", "[memory][latency]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  auto plugin = Create(Config(dir.File("state")), m.topology);
  constexpr int kPods = 50;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kPods; ++i) {
    AllocateOk(*plugin, WithHint(Request(fmt::format("p{}", i), 1.0 * kGiB, "reranker"), {i % 2}));
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  const double ms = std::chrono::duration<double, std::milli>(elapsed).count() / kPods;
  WARN("Allocate with a durable checkpoint write: " << ms << " ms per call");
  MemoryState state = plugin->Snapshot();
  CHECK(state.AllocatedOn(0) == kPods / 2 * kGiB);
  CHECK(state.AllocatedOn(1) == kPods / 2 * kGiB);
  for (int i = 0; i < kPods; i += 2) REQUIRE(plugin->RemovePod(fmt::format("uid-p{}", i)).ok());
  state = plugin->Snapshot();
  CHECK(state.AllocatedOn(0) == 0);
  CHECK(state.AllocatedOn(1) == kPods / 2 * kGiB);
  CHECK(state.pods().size() == kPods / 2);
}

}  // namespace
}  // namespace qrm::memory
