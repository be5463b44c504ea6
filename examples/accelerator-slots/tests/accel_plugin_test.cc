// The example plugin's ResourcePlugin methods called directly (no socket):
// request validation, hints, idempotent Allocate, release and persistence.
#include "examples/accelerator-slots/accel_plugin.h"

#include <cmath>
#include <filesystem>

#include <catch2/catch.hpp>
#include <google/protobuf/util/message_differencer.h>

#include "checkpoint/checkpoint_file.h"
#include "examples/accelerator-slots/tests/scratch_dir.h"

namespace qrm::example {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

using Catch::Contains;
using testing::ScratchDir;

constexpr const char* kRes = kDefaultResource;

std::unique_ptr<AccelPlugin> Make(const std::string& state = "", int slots_per_node = 4) {
  AccelConfig config;
  config.state_path = state;
  config.slots_per_node = slots_per_node;
  auto plugin = AccelPlugin::Create(config);
  INFO(plugin.status().ToString());
  REQUIRE(plugin.ok());
  return std::move(*plugin);
}

pb::ResourceRequest Req(const std::string& pod, const std::string& container, double slots,
                        const std::vector<uint64_t>& hint = {0, 1}, bool preferred = true) {
  pb::ResourceRequest r;
  r.set_pod_uid(pod);
  r.set_pod_name("pod-" + pod);
  r.set_pod_namespace("default");
  r.set_container_name(container);
  r.set_resource_name(kRes);
  (*r.mutable_resource_requests())[kRes] = slots;
  for (uint64_t n : hint) r.mutable_hint()->add_nodes(n);
  r.mutable_hint()->set_preferred(preferred);
  return r;
}

// Slots not held by any container, as a tool sees them: allocatable minus what
// GetResourcesAllocation reports allocated.
double Free(AccelPlugin& plugin) {
  auto a = plugin.GetTopologyAwareAllocatableResources();
  REQUIRE(a.ok());
  auto held = plugin.GetResourcesAllocation();
  REQUIRE(held.ok());
  double allocated = 0;
  for (const auto& [uid, pod] : held->pod_resources()) {
    for (const auto& [name, container] : pod.container_resources()) {
      auto it = container.resource_allocation().find(kRes);
      if (it != container.resource_allocation().end()) allocated += it->second.allocated_quantity();
    }
  }
  return a->allocatable_resources().at(kRes).aggregated_allocatable_quantity() - allocated;
}

bool Same(const google::protobuf::Message& a, const google::protobuf::Message& b) {
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

TEST_CASE("bad quantities are refused naming the field and value", "[example][plugin]") {
  auto plugin = Make();
  for (double bad : {2.5, -1.0, 9.0, std::nan(""), HUGE_VAL}) {
    auto hints = plugin->GetTopologyHints(Req("p1", "c0", bad));
    REQUIRE_FALSE(hints.ok());
    CHECK(hints.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(hints.status().message(),
               Contains("resource_requests[\"example.qrm.io/accel-slots\"] = "));
    CHECK_THAT(hints.status().message(), Contains("from 0 to 8"));
    CHECK(plugin->Allocate(Req("p1", "c0", bad)).status().code() == StatusCode::kInvalidArgument);
  }
  // The message names the field and the value, and not the pod: qrm-host prefixes the pod and
  // container itself, so a plugin that adds them makes the host's log say them twice.
  CHECK(plugin->Allocate(Req("p1", "c0", 2.5)).status().message() ==
        "resource_requests[\"example.qrm.io/accel-slots\"] = 2.5: must be a whole number of "
        "slots from 0 to 8");
  CHECK(Free(*plugin) == 8);
}

TEST_CASE("zero slots: no hint entry at all, nothing allocated", "[example][plugin]") {
  auto plugin = Make();
  auto hints = plugin->GetTopologyHints(Req("p1", "c0", 0));
  REQUIRE(hints.ok());
  CHECK(hints->resource_hints().count(kRes) == 0);  // absent = no preference
  pb::ResourceRequest other = Req("p1", "c0", 0);
  other.mutable_resource_requests()->clear();
  CHECK(plugin->GetTopologyHints(other)->resource_hints().empty());
  auto alloc = plugin->Allocate(Req("p1", "c0", 0));
  REQUIRE(alloc.ok());
  CHECK(alloc->allocation_result().resource_allocation().empty());
  CHECK(plugin->GetResourcesAllocation()->pod_resources().empty());
}

TEST_CASE("hints: present but empty when the request does not fit", "[example][plugin]") {
  auto plugin = Make();
  auto hints = plugin->GetTopologyHints(Req("p1", "c0", 3));
  REQUIRE(hints.ok());
  CHECK(hints->pod_uid() == "p1");
  CHECK(hints->container_name() == "c0");
  CHECK(hints->resource_name() == kRes);
  const auto& list = hints->resource_hints().at(kRes).hints();
  REQUIRE(list.size() == 3);
  CHECK(list[0].nodes_size() == 1);
  CHECK(list[0].nodes(0) == 0);
  CHECK(list[0].preferred());
  CHECK(list[2].nodes_size() == 2);
  CHECK_FALSE(list[2].preferred());

  REQUIRE(plugin->Allocate(Req("p1", "c0", 8)).ok());
  auto none = plugin->GetTopologyHints(Req("p2", "c0", 1));
  REQUIRE(none.ok());
  REQUIRE(none->resource_hints().count(kRes) == 1);  // present: cannot be satisfied
  CHECK(none->resource_hints().at(kRes).hints().empty());
  // A container that holds slots is pointed at them.
  auto held = plugin->GetTopologyHints(Req("p1", "c0", 8));
  REQUIRE(held.ok());
  REQUIRE(held->resource_hints().at(kRes).hints_size() == 1);
  CHECK(held->resource_hints().at(kRes).hints(0).nodes_size() == 2);
}

TEST_CASE("allocate fills the hint and reports envs, annotation and topology",
          "[example][plugin]") {
  auto plugin = Make();
  auto r = plugin->Allocate(Req("p1", "c0", 5, {0, 1}, true));
  REQUIRE(r.ok());
  CHECK(r->pod_uid() == "p1");
  CHECK(r->resource_name() == kRes);
  const auto& info = r->allocation_result().resource_allocation().at(kRes);
  CHECK(info.oci_property_name().empty());
  CHECK(info.is_scalar_resource());
  CHECK(info.allocated_quantity() == 5);
  CHECK(info.allocation_result() == "node0:4,node1:1");
  CHECK(info.envs().at("ACCEL_SLOTS") == "5");
  CHECK(info.envs().at("ACCEL_NUMA_NODES") == "0-1");
  CHECK(info.annotations().at(kRes) == "node0:4,node1:1");
  REQUIRE(info.resource_hints().hints_size() == 1);
  CHECK(info.resource_hints().hints(0).preferred());
  CHECK(info.resource_hints().hints(0).nodes_size() == 2);
  CHECK(info.topology_assignments().at(0) == 4);
  CHECK(info.topology_assignments().at(1) == 1);

  auto one = plugin->Allocate(Req("p2", "c0", 2, {1}));
  REQUIRE(one.ok());
  const auto& info2 = one->allocation_result().resource_allocation().at(kRes);
  CHECK(info2.allocation_result() == "node1:2");
  CHECK(info2.envs().at("ACCEL_NUMA_NODES") == "1");
  CHECK(info2.topology_assignments().count(0) == 0);

  auto topo = plugin->GetTopologyAwareResources([] {
    pb::GetTopologyAwareResourcesRequest q;
    q.set_pod_uid("p1");
    q.set_container_name("c0");
    return q;
  }());
  REQUIRE(topo.ok());
  CHECK(topo->pod_name() == "pod-p1");
  CHECK(topo->pod_namespace() == "default");
  const auto& res = topo->container_topology_aware_resources().allocated_resources().at(kRes);
  CHECK(res.aggregated_quantity() == 5);
  REQUIRE(res.topology_aware_quantity_list_size() == 2);
  CHECK(res.topology_aware_quantity_list(1).node() == 1);
  CHECK(res.topology_aware_quantity_list(1).resource_value() == 1);
  CHECK(res.topology_aware_quantity_list(1).topology_level() == pb::NUMA);

  pb::GetTopologyAwareResourcesRequest unknown;
  unknown.set_pod_uid("p9");
  unknown.set_container_name("c0");
  CHECK(plugin->GetTopologyAwareResources(unknown).status().code() == StatusCode::kNotFound);

  auto alloc = plugin->GetTopologyAwareAllocatableResources();
  REQUIRE(alloc.ok());
  const auto& a = alloc->allocatable_resources().at(kRes);
  // Allocatable is what pods can be given in all, whatever is allocated now (7 of 8 here):
  // the scheduler subtracts the pods' requests from it itself.
  CHECK(a.aggregated_capacity_quantity() == 8);
  CHECK(a.aggregated_allocatable_quantity() == 8);
  REQUIRE(a.topology_aware_allocatable_quantity_list_size() == 2);
  CHECK(a.topology_aware_allocatable_quantity_list(0).resource_value() == 4);
  CHECK(a.topology_aware_allocatable_quantity_list(1).resource_value() == 4);
  CHECK(a.topology_aware_capacity_quantity_list(1).resource_value() == 4);
  CHECK(Free(*plugin) == 1);
}

TEST_CASE("allocate is idempotent per container", "[example][plugin]") {
  auto plugin = Make();
  auto first = plugin->Allocate(Req("p1", "c0", 3, {0}));
  REQUIRE(first.ok());
  // Same container again (even with another hint or quantity): same answer.
  auto again = plugin->Allocate(Req("p1", "c0", 3, {1}));
  REQUIRE(again.ok());
  CHECK(Same(*first, *again));
  CHECK(Free(*plugin) == 5);
  // Another container of the same pod is a new allocation.
  REQUIRE(plugin->Allocate(Req("p1", "c1", 1, {0})).ok());
  CHECK(Free(*plugin) == 4);
}

TEST_CASE("allocate refuses what does not fit the hint and keeps nothing", "[example][plugin]") {
  auto plugin = Make();
  REQUIRE(plugin->Allocate(Req("p1", "c0", 3, {0})).ok());
  auto r = plugin->Allocate(Req("p2", "c0", 2, {0}));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kResourceExhausted);
  CHECK(r.status().message() ==
        "example.qrm.io/accel-slots = 2: 2 slot(s) do not fit on NUMA node(s) \"0\" (free: "
        "node0=1 node1=4)");
  CHECK(plugin->GetResourcesAllocation()->pod_resources().count("p2") == 0);
  CHECK(Free(*plugin) == 5);

  auto bad_hint = plugin->Allocate(Req("p3", "c0", 1, {64}));
  CHECK(bad_hint.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(bad_hint.status().message(), Catch::StartsWith("hint.nodes: "));
}

TEST_CASE("RemovePod releases every container of the pod, unknown pods succeed",
          "[example][plugin]") {
  auto plugin = Make();
  REQUIRE(plugin->Allocate(Req("p1", "c0", 3, {0})).ok());
  REQUIRE(plugin->Allocate(Req("p1", "c1", 2, {1})).ok());
  REQUIRE(plugin->Allocate(Req("p2", "c0", 1, {1})).ok());
  CHECK(Free(*plugin) == 2);
  REQUIRE(plugin->RemovePod("p1").ok());
  CHECK(Free(*plugin) == 7);
  CHECK(plugin->RemovePod("p1").ok());
  CHECK(plugin->RemovePod("never-seen").ok());
  auto all = plugin->GetResourcesAllocation();
  REQUIRE(all.ok());
  CHECK(all->pod_resources().size() == 1);
  CHECK(all->pod_resources().count("p2") == 1);
}

// [guide:unit-test]
TEST_CASE("state survives a restart of the plugin object", "[example][plugin][state]") {
  ScratchDir dir;
  const std::string state = dir.File("state/accel-slots.json");  // directory created on demand
  pb::GetResourcesAllocationResponse before;
  {
    auto plugin = Make(state);
    REQUIRE(plugin->Allocate(Req("p1", "c0", 3, {0})).ok());
    REQUIRE(plugin->Allocate(Req("p2", "c0", 5, {0, 1}, false)).ok());
    REQUIRE(plugin->Allocate(Req("p3", "c0", 0)).ok());
    REQUIRE(plugin->RemovePod("p1").ok());
    before = *plugin->GetResourcesAllocation();
  }
  REQUIRE(std::filesystem::exists(state + ".journal"));  // the ledger: snapshot + journal
  auto plugin = Make(state);
  auto after = plugin->GetResourcesAllocation();
  REQUIRE(after.ok());
  CHECK(Same(before, *after));
  CHECK(after->pod_resources().size() == 1);
  CHECK(Free(*plugin) == 3);
  // The restored grant is held: re-allocation is idempotent, not a second take.
  auto again = plugin->Allocate(Req("p2", "c0", 5));
  REQUIRE(again.ok());
  CHECK(again->allocation_result().resource_allocation().at(kRes).allocation_result() ==
        "node0:1,node1:4");
  CHECK(Free(*plugin) == 3);
}
// [guide:end]

TEST_CASE("a state file that no longer fits the machine stops the start",
          "[example][plugin][state]") {
  ScratchDir dir;
  const std::string state = dir.File("accel-slots.json");
  REQUIRE(Make(state)->Allocate(Req("p1", "c0", 3, {0})).ok());
  AccelConfig smaller;
  smaller.state_path = state;
  smaller.slots_per_node = 2;
  auto refused = AccelPlugin::Create(smaller);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kResourceExhausted);
  CHECK_THAT(refused.status().message(), Contains(state));
  CHECK_THAT(refused.status().message(), Contains("pod p1 container c0"));
}

TEST_CASE("a state file of another schema version is set aside and the plugin starts empty",
          "[example][plugin][state]") {
  ScratchDir dir;
  const std::string state = dir.File("accel-slots.json");
  rapidjson::Document doc;
  doc.SetObject();
  REQUIRE(checkpoint::Write(state, kStateVersion + 1, doc).ok());
  auto plugin = Make(state);
  CHECK(Free(*plugin) == 8);
  int set_aside = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    if (e.path().filename().string().rfind("accel-slots.json.corrupt-", 0) == 0) ++set_aside;
  }
  CHECK(set_aside == 1);
}

TEST_CASE("a corrupt state file is moved aside and the plugin starts empty",
          "[example][plugin][state]") {
  ScratchDir dir;
  const std::string state = dir.File("accel-slots.json");
  testing::WriteFile(state, "{\"version\":1,\"checks");
  auto plugin = Make(state);
  CHECK(Free(*plugin) == 8);
  checkpoint::ReadOptions read;
  read.max_version = kStateVersion;
  CHECK(checkpoint::Read(state, read).ok());  // a fresh, empty ledger in its place
  int quarantined = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    if (e.path().filename().string().rfind("accel-slots.json.corrupt-", 0) == 0) ++quarantined;
  }
  CHECK(quarantined == 1);
}

TEST_CASE("a failed state write undoes the allocation", "[example][plugin][state]") {
  ScratchDir dir;
  const std::string state = dir.File("sub/accel-slots.json");
  auto plugin = Make(state);
  REQUIRE(plugin->Allocate(Req("p1", "c0", 1, {0})).ok());
  // Replace the state directory with a plain file: every write now fails,
  // even for root.
  std::filesystem::remove_all(dir.File("sub"));
  testing::WriteFile(dir.File("sub"), "not a directory");
  auto r = plugin->Allocate(Req("p2", "c0", 2, {1}));
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Contains("persisting the allocation"));
  CHECK(Free(*plugin) == 7);
  CHECK(plugin->GetResourcesAllocation()->pod_resources().count("p2") == 0);
  // A release that cannot be persisted keeps the slots (the host retries).
  CHECK_FALSE(plugin->RemovePod("p1").ok());
  CHECK(Free(*plugin) == 7);
  CHECK(plugin->GetResourcesAllocation()->pod_resources().count("p1") == 1);
}

TEST_CASE("a replay after lost state gets the previous slots back when they are free",
          "[example][plugin]") {
  auto plugin = Make();
  REQUIRE(plugin->Allocate(Req("p1", "c0", 1, {0})).ok());
  // What qrm-host sends when this plugin no longer reports p2/c0: the stored request, with
  // the allocation_result the container had before.
  pb::ResourceRequest replay = Req("p2", "c0", 2, {0, 1}, false);
  (*replay.mutable_annotations())["qrm.io/previous-allocation"] = "node1:2";
  auto r = plugin->Allocate(replay);
  REQUIRE(r.ok());
  CHECK(r->allocation_result().resource_allocation().at(kRes).allocation_result() == "node1:2");
  CHECK(Free(*plugin) == 5);

  // Taken meanwhile (node 1 has 2 free, not 3), or not in the form we write: a fresh
  // allocation within the hint.
  pb::ResourceRequest taken = Req("p3", "c0", 3, {0, 1}, false);
  (*taken.mutable_annotations())["qrm.io/previous-allocation"] = "node1:3";
  auto fresh = plugin->Allocate(taken);
  REQUIRE(fresh.ok());
  CHECK(fresh->allocation_result().resource_allocation().at(kRes).allocation_result() == "node0:3");
  pb::ResourceRequest garbled = Req("p4", "c0", 1, {0, 1}, false);
  (*garbled.mutable_annotations())["qrm.io/previous-allocation"] = "0-3";
  auto anew = plugin->Allocate(garbled);
  REQUIRE(anew.ok());
  CHECK(anew->allocation_result().resource_allocation().at(kRes).allocation_result() == "node1:1");
  CHECK(Free(*plugin) == 1);
}

TEST_CASE("a version 1 state file is upgraded without losing a grant", "[example][state]") {
  ScratchDir dir;
  const std::string state = dir.File("accel-slots.json");
  rapidjson::Document v1;
  v1.Parse(R"({"pods": {"p1": {"name": "web", "namespace": "default", "containers": {"c0":
              {"slots": {"0": 2, "1": 1}, "hint": "0-1", "hint_preferred": false}}}}})");
  REQUIRE(checkpoint::Write(state, 1, v1).ok());
  auto plugin = Make(state);
  CHECK(Free(*plugin) == 5);
  auto held = plugin->GetResourcesAllocation();
  REQUIRE(held.ok());
  CHECK(held->pod_resources()
            .at("p1")
            .container_resources()
            .at("c0")
            .resource_allocation()
            .at(kRes)
            .allocation_result() == "node0:2,node1:1");
  plugin.reset();
  CHECK(Free(*Make(state)) == 5);  // and now it is a ledger like any other
}

TEST_CASE("an old default state file moves to the state directory", "[example][state]") {
  ScratchDir dir;
  const std::string legacy = dir.File("plugins/accel-slots.json");
  const std::string path = dir.File("state/accel-slots.json");
  std::filesystem::create_directories(dir.File("plugins"));
  REQUIRE(Make(legacy)->Allocate(Req("p1", "c0", 3, {0})).ok());

  REQUIRE(AdoptLegacyStateFile(legacy, path).ok());
  CHECK_FALSE(std::filesystem::exists(legacy));
  CHECK(Free(*Make(path)) == 5);  // the allocation came along

  // Nothing to move, or both present (the new one wins): nothing happens.
  CHECK(AdoptLegacyStateFile(legacy, path).ok());
  testing::WriteFile(legacy, "stale");
  CHECK(AdoptLegacyStateFile(legacy, path).ok());
  CHECK(std::filesystem::exists(legacy));
  CHECK(Free(*Make(path)) == 5);

  // A move that cannot happen stops the start, naming both paths.
  testing::WriteFile(dir.File("blocked"), "a file where a directory should be");
  Status refused = AdoptLegacyStateFile(legacy, dir.File("blocked/accel-slots.json"));
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.message(), Contains(legacy));
  CHECK_THAT(refused.message(), Contains("blocked/accel-slots.json"));
}

}  // namespace
}  // namespace qrm::example
