// Pod-resources against independent witnesses: what qrm-host's pod-resources service lists for
// each container must equal what each plugin recorded in its own ledger (the CPU plugin's
// cpuset and pools, the memory plugin's bytes and nodes, the NIC plugin's interface) and what
// the container's cgroup holds. The host answers List from its checkpoint, so comparing with
// the plugins' files checks the whole chain plugin -> admission -> host checkpoint -> service.
#include <map>
#include <set>
#include <string>

#include <rapidjson/document.h>

#include "checkpoint/checkpoint_file.h"
#include "common/cpu_set.h"
#include "plugins/sdk/pod_ledger.h"
#include "tests/e2e/host/node_fixture.h"

namespace qrm::e2e {
namespace {

using Catch::Matchers::Contains;

// One container's entry in a plugin's ledger: what the snapshot and the journal hold together.
rapidjson::Document LedgerEntry(NodeFixture& node, const std::string& which,
                                const std::string& file, const std::string& uid,
                                const std::string& container) {
  auto ledger = sdk::ReadLedger(node.File("state-" + which) + "/" + file);
  INFO(ledger.status().ToString());
  REQUIRE(ledger.ok());
  const auto pod = ledger->pods.find(uid);
  REQUIRE(pod != ledger->pods.end());
  REQUIRE(pod->second.count(container) == 1);
  rapidjson::Document entry;
  entry.Parse(pod->second.at(container).c_str());
  return entry;
}

std::string StringOr(const rapidjson::Value& object, const char* key, const char* fallback) {
  const auto it = object.FindMember(key);
  return it == object.MemberEnd() ? fallback : it->value.GetString();
}

std::string Nodes(const ::v1::TopologyInfo& topology) {
  CpuSet nodes;  // a set of small ids with the usual "0-1,3" text
  for (const auto& n : topology.nodes()) nodes.Add(static_cast<int>(n.id()));
  return nodes.ToString();
}

// This machine's online NUMA nodes ("0" without NUMA), as qrm-host reads them.
std::string MachineNodes() {
  std::string online = testing::ReadFile("/sys/devices/system/node/online");
  while (!online.empty() && (online.back() == '\n' || online.back() == ' ')) online.pop_back();
  return online.empty() ? "0" : online;
}

TEST_CASE("pod-resources lists the CPUs, memory and NICs the plugins recorded") {
  if (!Root()) return;
  NodeFixture node;
  node.StartQrm({"--reclaimed-pool-size", "0"});
  CriClient shim = node.Shim();

  // A NUMA-bound dedicated pod and a shared pod, each with one CPU, 64 MiB and a NIC.
  struct Want {
    std::string name;
    std::map<std::string, std::string> annotations;
  };
  const std::vector<Want> pods = {
      {"bound",
       {{"katalyst.kubewharf.io/qos_level", "dedicated_cores"},
        {"katalyst.kubewharf.io/memory_enhancement", R"({"numa_binding": "true"})"}}},
      {"shared", {{"katalyst.kubewharf.io/qos_level", "shared_cores"}}},
  };
  std::map<std::string, std::string> container_of;  // pod name -> container id
  for (const Want& want : pods) {
    auto pod = shim.RunHostNetworkPod(want.name, want.name + "-uid", "default", want.annotations);
    INFO(pod.status().ToString() << "\n" << node.Logs());
    REQUIRE(pod.ok());
    ContainerSpec spec = OneCpu("main");
    spec.annotations["qrm.io/resources"] = R"({"qrm.io/nic": 1})";
    auto id = shim.CreateAndStartContainer(*pod, spec);
    INFO(id.status().ToString() << "\n" << node.Logs());
    REQUIRE(id.ok());
    container_of[want.name] = *id;
  }

  auto listed = node.PodResources();
  INFO(listed.status().ToString());
  REQUIRE(listed.ok());
  REQUIRE(listed->pod_resources_size() == 2);

  // The plugins keep ledgers (snapshot + journal).
  const auto cpuset_of = [&](const std::string& uid) {
    return std::string(
        LedgerEntry(node, "cpu", "cpu_plugin_state", uid, "main")["cpuset"].GetString());
  };

  // The shared pool as the CPU plugin recorded it for the shared container (admitted after the
  // bound one took its CPU, so the pool has not moved since).
  auto shared_pool = CpuSet::Parse(cpuset_of("shared-uid"));
  REQUIRE(shared_pool.ok());

  for (const auto& p : listed->pod_resources()) {
    INFO("pod " << p.name());
    const std::string uid = p.name() + "-uid";
    REQUIRE(p.containers_size() == 1);
    const auto& c = p.containers(0);
    CHECK(c.name() == "main");

    // CPUs: the dedicated container's own cpuset, the shared one's pool; both equal the cgroup.
    CpuSet listed_cpus;
    for (int64_t id : c.cpu_ids()) listed_cpus.Add(static_cast<int>(id));
    if (p.name() == "bound") {
      CHECK(listed_cpus.ToString() == cpuset_of(uid));
      CHECK(listed_cpus.Size() == 1);
    } else {
      CHECK(listed_cpus == *shared_pool);
    }
    auto cgroup = shim.ContainerCgroupCpus(container_of.at(p.name()));
    REQUIRE(cgroup.ok());
    CHECK(listed_cpus.ToString() == *cgroup);

    // Memory: the bytes and nodes the memory plugin recorded.
    const rapidjson::Document mem_entry =
        LedgerEntry(node, "memory", "memory_plugin_state", uid, "main");
    REQUIRE(c.memory_size() == 1);
    CHECK(c.memory(0).memory_type() == "memory");
    CHECK(std::to_string(c.memory(0).size()) == mem_entry["quantity"].GetString());
    CHECK(c.memory(0).size() == (64ULL << 20));
    const std::string mem_nodes = StringOr(mem_entry, "numa_nodes", "");
    if (p.name() == "bound") {
      CHECK_FALSE(mem_nodes.empty());
      CHECK(Nodes(c.memory(0).topology()) == mem_nodes);
    } else {
      // Bound to no node: the bytes may come from any node of the machine, so the block
      // names them all (the kubelet never reports a block without topology).
      CHECK(mem_nodes.empty());
      CHECK(Nodes(c.memory(0).topology()) == MachineNodes());
    }

    // NIC: the interface the NIC plugin recorded, as a device of qrm.io/nic.
    const rapidjson::Document nic_entry = LedgerEntry(node, "nic", "nic_plugin_state", uid, "main");
    std::string interface = nic_entry["interface_name"].GetString();
    const std::string netns = StringOr(nic_entry, "netns_name", "");
    if (!netns.empty()) interface = netns + "/" + interface;
    REQUIRE(c.devices_size() == 1);
    CHECK(c.devices(0).resource_name() == "qrm.io/nic");
    REQUIRE(c.devices(0).device_ids_size() == 1);
    CHECK(c.devices(0).device_ids(0) == interface);
  }
}

TEST_CASE("pod-resources answers List and Get for every active pod, as the kubelet does") {
  if (!Root()) return;
  NodeFixture node;
  node.StartQrm({"--reclaimed-pool-size", "0"});
  CriClient shim = node.Shim();
  // A pod qrm passes through untouched (nothing allocated) and an admitted one.
  auto skipped =
      shim.RunHostNetworkPod("skipped", "skipped-uid", "default", {{"qrm.io/skip", "true"}});
  REQUIRE(skipped.ok());
  auto skipped_id = shim.CreateAndStartContainer(*skipped, OneCpu("app"));
  INFO(skipped_id.status().ToString() << "\n" << node.Logs());
  REQUIRE(skipped_id.ok());
  auto shared = shim.RunHostNetworkPod("shared", "shared-uid", "default",
                                       {{"katalyst.kubewharf.io/qos_level", "shared_cores"}});
  REQUIRE(shared.ok());
  REQUIRE(shim.CreateAndStartContainer(*shared, OneCpu("main")).ok());

  auto listed = node.PodResources();
  INFO(listed.status().ToString());
  REQUIRE(listed.ok());
  std::map<std::string, const ::v1::PodResources*> by_name;
  for (const auto& p : listed->pod_resources()) by_name[p.name()] = &p;
  REQUIRE(by_name.contains("shared"));
  REQUIRE(by_name.contains("skipped"));
  const ::v1::PodResources& s = *by_name["skipped"];
  CHECK(s.namespace_() == "default");
  REQUIRE(s.containers_size() == 1);
  CHECK(s.containers(0).name() == "app");
  CHECK(s.containers(0).cpu_ids_size() == 0);
  CHECK(s.containers(0).memory_size() == 0);
  CHECK(s.containers(0).devices_size() == 0);

  auto stub = ::v1::PodResourcesLister::NewStub(
      grpc::CreateChannel("unix:" + node.PodResourcesSocket(), grpc::InsecureChannelCredentials()));
  auto get = [&](const std::string& name, ::v1::GetPodResourcesResponse* out) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    ::v1::GetPodResourcesRequest req;
    req.set_pod_name(name);
    req.set_pod_namespace("default");
    return stub->Get(&ctx, req, out);
  };
  ::v1::GetPodResourcesResponse got;
  grpc::Status ok = get("skipped", &got);
  INFO(ok.error_message());
  REQUIRE(ok.ok());
  CHECK(got.pod_resources().containers_size() == 1);
  grpc::Status missing = get("nobody", &got);
  CHECK(missing.error_code() == grpc::StatusCode::UNKNOWN);
  CHECK(missing.error_message() == "pod nobody in namespace default not found");
}

}  // namespace
}  // namespace qrm::e2e
