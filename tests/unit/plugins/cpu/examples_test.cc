// The design document's examples 1-3 ("Simulation: how QRM works"), CPU side, exactly.
#include "checkpoint/checkpoint_file.h"
#include "tests/unit/plugins/cpu/cpu_test_util.h"

namespace qrm::cpu::testing {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

// machineState of the checkpoint, node -> key -> cpuset text, after the plugin wrote a
// snapshot (the view is as of the last snapshot; the journal holds the changes since).
std::map<std::string, std::map<std::string, std::string>> MachineState(CpuPlugin& plugin,
                                                                       const std::string& path) {
  REQUIRE(plugin.WriteSnapshot().ok());
  checkpoint::ReadOptions read;
  read.max_version = kLedgerVersion;
  auto cp = checkpoint::Read(path, read);
  INFO(cp.status().ToString());
  REQUIRE(cp.ok());
  std::map<std::string, std::map<std::string, std::string>> out;
  for (const auto& node : cp->data["machineState"].GetObject()) {
    for (const auto& m : node.value.GetObject()) {
      out[node.name.GetString()][m.name.GetString()] = m.value.GetString();
    }
  }
  return out;
}

TEST_CASE("example 1: online and offline pools, then the QoS system resizes them",
          "[cpu][example1]") {
  TempDir dir;
  const auto topology = FakeTopology("doc80");
  CpuPluginConfig config;
  config.state_dir = dir.path();
  config.reclaimed_pool_size = 4;              // as examples/configs/example1
  auto plugin = MakePlugin(topology, config);  // no reserved CPUs, reclaimed pool 4

  CHECK(plugin->pools().reclaimed.ToString() == "38-39,78-79");
  CHECK(plugin->pools().shared.ToString() == "0-37,40-77");

  // pod1: online-micro_service, 4 CPUs -> the online pool, no NUMA preference.
  CHECK(Hints(*plugin, Request("pod1", "online-micro_service", 4)) == "absent");
  const auto pod1 = AllocateOk(*plugin, Request("pod1", "online-micro_service", 4));
  CHECK(pod1.oci_property_name() == "CpusetCpus");
  CHECK_FALSE(pod1.is_node_resource());
  CHECK(pod1.is_scalar_resource());
  CHECK(pod1.allocated_quantity() == 76);
  CHECK(pod1.allocation_result() == "0-37,40-77");
  CHECK(pod1.resource_hints().hints_size() == 0);

  // pod2: ETL, 2 CPUs -> the offline pool.
  CHECK(Hints(*plugin, Request("pod2", "ETL", 2)) == "absent");
  const auto pod2 = AllocateOk(*plugin, Request("pod2", "ETL", 2));
  CHECK(pod2.allocated_quantity() == 4);
  CHECK(pod2.allocation_result() == "38-39,78-79");

  // pod3: online again, same pool.
  const auto pod3 = AllocateOk(*plugin, Request("pod3", "online-micro_service", 4));
  CHECK(pod3.allocation_result() == "0-37,40-77");
  CHECK(pod3.allocated_quantity() == 76);

  // The QoS system grows the offline pool to 52 CPUs.
  REQUIRE(plugin->ResizePools({.reclaimed = 52}).ok());
  auto all = plugin->GetResourcesAllocation();
  REQUIRE(all.ok());
  const auto info = [&](const std::string& uid) {
    return all->pod_resources()
        .at(uid)
        .container_resources()
        .at("container0")
        .resource_allocation()
        .at("cpu");
  };
  CHECK(info("pod1").allocation_result() == "0-13,40-53");
  CHECK(info("pod1").allocated_quantity() == 28);
  CHECK(info("pod2").allocation_result() == "14-39,54-79");
  CHECK(info("pod2").allocated_quantity() == 52);
  CHECK(info("pod3").allocation_result() == "0-13,40-53");
  CHECK(info("pod3").allocated_quantity() == 28);

  // Durable: the ledger (snapshot and journal) holds the new size; pools and the pool
  // containers' cpusets are recomputed from it (the restart below).
  auto ledger = sdk::ReadLedger(dir.File("cpu_plugin_state"));
  REQUIRE(ledger.ok());
  CHECK(ledger->settings.at("reclaimed_size") == "52");
  const auto state = MachineState(*plugin, dir.File("cpu_plugin_state"));
  CHECK(state.at("0").at("reclaimed_cpuset") == "14-39");
  CHECK(state.at("1").at("shared_cpuset") == "40-53");
  CHECK(state.at("0").at("default_cpuset") == "0-39");

  // Sizing the shared pool instead is the same resize seen from the other side.
  REQUIRE(plugin->ResizePools({.shared = 76}).ok());
  CHECK(Cpusets(*plugin).at("pod2/container0") == "38-39,78-79");
  CHECK(Cpusets(*plugin).at("pod1/container0") == "0-37,40-77");

  // A restart (no snapshot at stop: everything comes from the journal) restores all of it.
  const auto before = Cpusets(*plugin);
  plugin.reset();
  config.reclaimed_pool_size.reset();  // the ledger's size, not the flag's
  auto restarted = MakePlugin(topology, config);
  CHECK(Cpusets(*restarted) == before);
  CHECK(restarted->reclaimed_size() == 4);
  CHECK(restarted->state().shared_size == 76);
}

TEST_CASE("example 2: storage-service and reranker are NUMA anti-affine", "[cpu][example2]") {
  TempDir dir;
  const auto topology = FakeTopology("doc80");
  CpuPluginConfig config;
  config.state_dir = dir.path();
  config.reserved_cpus = "0-1,40-41";
  auto plugin = MakePlugin(topology, config);

  // The document's initial machine state.
  auto state = MachineState(*plugin, dir.File("cpu_plugin_state"));
  CHECK(state.at("0").at("reserved_cpuset") == "0-1");
  CHECK(state.at("0").at("allocated_cpuset") == "");
  CHECK(state.at("0").at("default_cpuset") == "2-39");
  CHECK(state.at("1").at("reserved_cpuset") == "40-41");
  CHECK(state.at("1").at("allocated_cpuset") == "");
  CHECK(state.at("1").at("default_cpuset") == "42-79");

  // pod1, storage-service, 20 CPUs: either node alone would do; node 0 wins the merge.
  const auto pod1_req = Request("pod1", "storage-service", 20);
  CHECK(Hints(*plugin, pod1_req) == "0* 1* 0-1");
  const auto pod1 = AllocateOk(*plugin, WithHint(pod1_req, {0}));
  CHECK(pod1.allocation_result() == "2-21");
  CHECK(pod1.allocated_quantity() == 20);
  REQUIRE(pod1.resource_hints().hints_size() == 1);
  CHECK(HintText(pod1.resource_hints()) == "0*");

  // pod2, reranker, 10 CPUs: node 0 holds a storage-service, so only node 1.
  const auto pod2_req = Request("pod2", "reranker", 10);
  CHECK(Hints(*plugin, pod2_req) == "1*");
  const auto pod2 = AllocateOk(*plugin, WithHint(pod2_req, {1}));
  CHECK(pod2.allocation_result() == "42-51");
  CHECK(pod2.allocated_quantity() == 10);
  CHECK(HintText(pod2.resource_hints()) == "1*");

  state = MachineState(*plugin, dir.File("cpu_plugin_state"));
  CHECK(state.at("0").at("allocated_cpuset") == "2-21");
  CHECK(state.at("0").at("default_cpuset") == "22-39");
  CHECK(state.at("1").at("allocated_cpuset") == "42-51");
  CHECK(state.at("1").at("default_cpuset") == "52-79");

  // Forcing a reranker onto node 0 is refused, naming the conflict, and takes nothing.
  auto forced = plugin->Allocate(WithHint(Request("pod3", "reranker", 2), {0}));
  REQUIRE_FALSE(forced.ok());
  CHECK(forced.status().code() == StatusCode::kResourceExhausted);
  CHECK_THAT(forced.status().message(), Catch::Contains("anti-affine"));
  CHECK_THAT(forced.status().message(), Catch::Contains("storage-service"));
  CHECK(plugin->state().Find("pod3", "container0") == nullptr);

  // Per-NUMA accounting of the dedicated containers.
  pb::GetTopologyAwareResourcesRequest q;
  q.set_pod_uid("pod1");
  q.set_container_name("container0");
  auto aware = plugin->GetTopologyAwareResources(q);
  REQUIRE(aware.ok());
  const auto& cpu = aware->container_topology_aware_resources().allocated_resources().at("cpu");
  CHECK(cpu.aggregated_quantity() == 20);
  REQUIRE(cpu.topology_aware_quantity_list_size() == 1);
  CHECK(cpu.topology_aware_quantity_list(0).node() == 0);
  CHECK(cpu.topology_aware_quantity_list(0).resource_value() == 20);
}

TEST_CASE("example 3: numa-enhancement pods share node 1 with each other only", "[cpu][example3]") {
  const auto topology = FakeTopology("doc80");
  CpuPluginConfig config;
  config.reserved_cpus = "0-1,40-41";
  config.reclaimed_pool_size = 4;  // as examples/configs/example3
  auto plugin = MakePlugin(topology, config);

  // NUMA node 0 fully allocated: an exclusive pod takes every non-reserved CPU of it.
  const auto holder =
      AllocateOk(*plugin, WithHint(Request("holder", "storage-exclusive", 16), {0}));
  CHECK(holder.allocation_result() == "2-39");
  CHECK(holder.allocated_quantity() == 38);
  CHECK(plugin->pools().reclaimed.ToString() == "76-79");  // the pool moved off node 0

  const auto pod1_req = Request("pod1", "numa-enhancement", 10);
  CHECK(Hints(*plugin, pod1_req) == "1*");
  CHECK(AllocateOk(*plugin, WithHint(pod1_req, {1})).allocation_result() == "42-51");

  // The same role may share the node.
  const auto pod2_req = Request("pod2", "numa-enhancement", 10);
  CHECK(Hints(*plugin, pod2_req) == "1*");
  CHECK(AllocateOk(*plugin, WithHint(pod2_req, {1})).allocation_result() == "52-61");

  // Any other NUMA-bound role may not ("*"), and node 0 is full: cannot be satisfied.
  CHECK(Hints(*plugin, Request("pod3", "reranker", 2)) == "");
}

}  // namespace
}  // namespace qrm::cpu::testing
