// The NIC plugin's ledger: the document's shape, restart, a NIC that disappeared, failed
// writes, state files that cannot be restored, and the upgrade of a version 1 file.
#include "plugins/nic/nic_ledger.h"

#include <atomic>
#include <filesystem>
#include <memory>

#include <catch2/catch.hpp>
#include <google/protobuf/util/message_differencer.h>

#include "checkpoint/checkpoint_file.h"
#include "common/protocol_keys.h"
#include "plugins/nic/nic_checkpoint.h"
#include "testing/ledger_files.h"
#include "tests/unit/plugins/nic/nic_test_util.h"

namespace qrm::nic {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

namespace fs = std::filesystem;
using Catch::Contains;
using qrm::testing::TempDir;
using namespace testutil;

constexpr const char* kBw = kNicBandwidthResourceName;
constexpr const char* kNic = kNicResourceName;

pb::GetResourcesAllocationResponse AllocationsOk(NicPlugin& plugin) {
  auto r = plugin.GetResourcesAllocation();
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return *r;
}

rapidjson::Document SnapshotData(const std::string& path) {
  auto data = qrm::testing::LedgerSnapshotData(path);
  INFO(data.status().ToString());
  REQUIRE(data.ok());
  return std::move(*data);
}

TEST_CASE("the snapshot's view has the document's shape, the entry what the container was told",
          "[nic][checkpoint]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  auto plugin = Create(Config(dir.File("state")), m.topology);
  AllocateOk(*plugin, WithHint(Request("pod1", {{kBw, 2000}}, {}, "numa-enhancement"), {1}));

  const std::string file = dir.File("state/nic_plugin_state");
  auto entry = qrm::testing::LedgerEntry(file, "uid-pod1", "c0");  // from the journal
  INFO(entry.status().ToString());
  REQUIRE(entry.ok());
  CHECK(std::string((*entry)["interface_name"].GetString()) == "eth1");
  CHECK(std::string((*entry)["netns_name"].GetString()) == "ns1");
  CHECK(std::string((*entry)["netns"].GetString()) == m.paths.netns_dir + "/ns1");
  CHECK((*entry)["numa_node"].GetInt() == 1);
  CHECK((*entry)["bandwidth_mbps"].GetInt64() == 2000);
  CHECK(std::string((*entry)["ipv6"].GetString()) == "fd00:1::10");
  CHECK((*entry)["hint_preferred"].GetBool());

  REQUIRE(plugin->WriteSnapshot().ok());  // as at a clean stop
  const rapidjson::Document data = SnapshotData(file);
  const rapidjson::Value& eth0 = data["machineState"]["0"]["nics"][0];
  CHECK(std::string(eth0["interface_name"].GetString()) == "eth0");
  CHECK(eth0["numa_node"].GetInt() == 0);
  CHECK(std::string(eth0["address"]["ipv4"].GetString()) == "10.0.0.10");
  CHECK(std::string(eth0["address"]["ipv6"].GetString()) == "fd00::10");
  CHECK_FALSE(eth0.HasMember("netns"));  // root namespace
  CHECK(eth0["speed_mbps"].GetInt64() == 25000);
  CHECK(eth0["bandwidth_allocated_mbps"].GetInt64() == 0);
  const rapidjson::Value& eth1 = data["machineState"]["1"]["nics"][0];
  CHECK(std::string(eth1["interface_name"].GetString()) == "eth1");
  CHECK(std::string(eth1["netns"].GetString()) == m.paths.netns_dir + "/ns1");
  CHECK(eth1["bandwidth_allocated_mbps"].GetInt64() == 2000);
  CHECK(data["pods"]["uid-pod1"].HasMember("c0"));
}

TEST_CASE("a restarted plugin restores the same allocations", "[nic][checkpoint]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  pb::GetResourcesAllocationResponse before;
  {
    auto plugin = Create(Config(dir.File("state")), m.topology);
    AllocateOk(*plugin, WithHint(Request("a", {{kBw, 20000}}), {0}));
    AllocateOk(*plugin, WithHint(Request("b", {}, {}, "numa-enhancement"), {1}));
    AllocateOk(*plugin, WithHint(Request("c", {{kNic, 1}}), {1}));
    REQUIRE(plugin->RemovePod("uid-c").ok());
    before = AllocationsOk(*plugin);
  }
  auto plugin = Create(Config(dir.File("state")), m.topology);
  CHECK(google::protobuf::util::MessageDifferencer::Equals(before, AllocationsOk(*plugin)));
  CHECK(before.pod_resources().size() == 2);
  // The restored bandwidth is really held: 5000 left on eth0.
  CHECK(plugin->Snapshot().AllocatedMbps({"", "eth0"}) == 20000);
  CHECK(HintsOk(*plugin, Request("d", {{kBw, 6000}})).nodes == std::vector<std::string>{"1"});
}

TEST_CASE("a NIC that disappeared is reported missing while the others keep serving",
          "[nic][checkpoint]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  pb::ResourceAllocationInfo before;
  {
    auto plugin = Create(Config(dir.File("state")), m.topology);
    before = AllocateOk(*plugin, WithHint(Request("a", {{kBw, 1000}}), {1}));
    REQUIRE(before.allocation_result() == "ns1/eth1");
  }
  // eth1's namespace is gone after the restart.
  fs::remove_all(m.paths.netns_dir + "/ns1");
  auto topo = machine::Discover(m.paths.Options());
  REQUIRE(topo.ok());
  REQUIRE(topo->nics.size() == 1);
  auto plugin = Create(Config(dir.File("state")), *topo);

  const auto info = AllocationsOk(*plugin)
                        .pod_resources()
                        .at("uid-a")
                        .container_resources()
                        .at("c0")
                        .resource_allocation()
                        .at(kNic);
  CHECK(info.allocation_result() == "ns1/eth1 (missing)");
  // What the container was told does not change.
  CHECK(std::map<std::string, std::string>(info.envs().begin(), info.envs().end()) ==
        std::map<std::string, std::string>(before.envs().begin(), before.envs().end()));
  CHECK(info.annotations().at("kubernetes.io/host-netns-path") == m.paths.netns_dir + "/ns1");

  // eth0 still serves; nothing is offered on node 1 any more.
  CHECK(HintsOk(*plugin, Request("b", {{kNic, 1}})).nodes == std::vector<std::string>{"0"});
  CHECK(AllocateOk(*plugin, Request("b", {{kNic, 1}})).allocation_result() == "eth0");
  // Releasing the pod of the missing NIC works.
  REQUIRE(plugin->RemovePod("uid-a").ok());
  CHECK(AllocationsOk(*plugin).pod_resources().count("uid-a") == 0);
}

TEST_CASE("a failed ledger write fails the RPC and changes nothing", "[nic][checkpoint]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  const std::string state_dir = dir.File("state");
  auto fail = std::make_shared<std::atomic<bool>>(false);
  NicPluginConfig config = Config(state_dir);
  // A full disk: every journal append and snapshot write fails.
  config.write_options.fault_hook = [fail](checkpoint::WriteStep step) {
    if (*fail && step == checkpoint::WriteStep::kRename) {
      return Status(StatusCode::kResourceExhausted, "injected: disk full");
    }
    return Status::Ok();
  };
  config.journal_options.fault_hook = [fail](checkpoint::JournalStep step) {
    if (*fail && step == checkpoint::JournalStep::kSync) {
      return Status(StatusCode::kResourceExhausted, "injected: disk full");
    }
    return Status::Ok();
  };
  auto plugin = Create(config, m.topology);
  AllocateOk(*plugin, WithHint(Request("a", {{kBw, 1000}}), {0}));
  const std::string files_before = qrm::testing::LedgerFileBytes(state_dir + "/nic_plugin_state");

  *fail = true;
  auto r = plugin->Allocate(WithHint(Request("b", {{kBw, 1000}}), {0}));
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(),
             Contains("persisting the allocation") && Contains("injected: disk full"));
  CHECK(plugin->Snapshot().Pod("uid-b") == nullptr);
  CHECK(plugin->Snapshot().AllocatedMbps({"", "eth0"}) == 1000);

  CHECK_FALSE(plugin->RemovePod("uid-a").ok());
  CHECK(plugin->Snapshot().Pod("uid-a") != nullptr);  // still held: the host will retry
  // The failed appends were taken back: a restart could not apply them.
  CHECK(qrm::testing::LedgerFileBytes(state_dir + "/nic_plugin_state") == files_before);

  *fail = false;
  REQUIRE(plugin->RemovePod("uid-a").ok());
  CHECK(plugin->Snapshot().AllocatedMbps({"", "eth0"}) == 0);
}

int FilesStartingWith(const std::string& dir, const std::string& prefix) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().starts_with(prefix)) ++n;
  }
  return n;
}

TEST_CASE("a corrupt checkpoint is moved aside and the plugin starts empty", "[nic][checkpoint]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  {
    auto plugin = Create(Config(dir.File("state")), m.topology);
    AllocateOk(*plugin, Request("a", {{kNic, 1}}));
    REQUIRE(plugin->WriteSnapshot().ok());  // the entry in the snapshot
  }
  const std::string file = dir.File("state/nic_plugin_state");
  std::string text = qrm::testing::ReadFile(file);
  REQUIRE(text.find("uid-a") != std::string::npos);
  text.replace(text.find("uid-a"), 5, "uid-b");  // checksum no longer matches
  qrm::testing::WriteFile(file, text);

  auto plugin = Create(Config(dir.File("state")), m.topology);
  CHECK(plugin->Snapshot().pods().empty());
  CHECK(plugin->state_file().corrupt);
  CHECK_THAT(plugin->state_file().problem, Contains(file));
  CHECK(FilesStartingWith(dir.File("state"), "nic_plugin_state.corrupt-") == 1);
  CHECK(qrm::testing::ReadFile(plugin->state_file().set_aside) == text);  // the evidence
}

TEST_CASE("a replay names the NIC the container had", "[nic][checkpoint]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  auto plugin = Create(Config(dir.File("state")), m.topology);
  // Without the annotation the first NIC in order is picked; the replay asks for the other.
  const std::string first = AllocateOk(*plugin, Request("a", {{kNic, 1}})).allocation_result();
  REQUIRE(plugin->RemovePod("uid-a").ok());
  REQUIRE((first == "eth0" || first == "ns1/eth1"));
  const std::string other = first == "eth0" ? "ns1/eth1" : "eth0";
  pb::ResourceRequest replay = Request("a", {{kNic, 1}});
  (*replay.mutable_annotations())[kPreviousAllocationAnnotation] = other;
  const std::string again = AllocateOk(*plugin, replay).allocation_result();
  CHECK(again == other);
}

TEST_CASE("a malformed entry is set aside, naming the pod, container and field",
          "[nic][checkpoint]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  {
    auto plugin = Create(Config(dir.File("state")), m.topology);
    AllocateOk(*plugin, WithHint(Request("x", {{kBw, 1000}}), {0}));
    REQUIRE(plugin->WriteSnapshot().ok());  // the entry in the snapshot, the journal empty
  }
  const std::string file = dir.File("state/nic_plugin_state");
  rapidjson::Document data = SnapshotData(file);
  data["pods"]["uid-x"]["c0"]["bandwidth_mbps"].SetInt(-3);
  REQUIRE(checkpoint::Write(file, kLedgerVersion, data).ok());
  auto plugin = Create(Config(dir.File("state")), m.topology);
  CHECK(plugin->Snapshot().pods().empty());
  CHECK(plugin->state_file().corrupt);
  CHECK_THAT(plugin->state_file().problem,
             Contains("pod uid-x container c0: bandwidth_mbps -3: not a number of Mb/s >= 0"));
}

TEST_CASE("a version 1 state file is upgraded to the ledger without losing a container",
          "[nic][checkpoint]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  const std::string file = dir.File("state/nic_plugin_state");
  pb::GetResourcesAllocationResponse before;
  rapidjson::Document v1;
  {
    // What an older plugin held, written in its format (the whole state in one file).
    auto in_memory = Create(Config(), m.topology);
    AllocateOk(*in_memory, WithHint(Request("a", {{kBw, 20000}}), {0}));
    AllocateOk(*in_memory, WithHint(Request("b", {}, {}, "numa-enhancement"), {1}));
    before = AllocationsOk(*in_memory);
    v1 = EncodeCheckpoint(in_memory->Snapshot());
  }
  fs::create_directories(dir.File("state"));
  REQUIRE(checkpoint::Write(file, kCheckpointVersion, v1).ok());
  auto upgraded = Create(Config(dir.File("state")), m.topology);
  CHECK(google::protobuf::util::MessageDifferencer::Equals(before, AllocationsOk(*upgraded)));
  CHECK(SnapshotData(file)["pods"].MemberCount() == 2);
  upgraded.reset();
  auto again = Create(Config(dir.File("state")), m.topology);
  CHECK(google::protobuf::util::MessageDifferencer::Equals(before, AllocationsOk(*again)));
  CHECK(again->Snapshot().AllocatedMbps({"", "eth0"}) == 20000);
}

TEST_CASE("a malformed version 1 entry is set aside, naming its key", "[nic][checkpoint]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  rapidjson::Document doc;
  doc.Parse(R"({"machineState": {}, "pod_entries": {"uid-x": {"c0": {
      "pod_name": "x", "pod_namespace": "default", "interface_name": "eth0",
      "netns_name": "", "numa_node": 0, "bandwidth_mbps": -3, "address": {},
      "hint_preferred": true}}}})");
  fs::create_directories(dir.File("state"));
  REQUIRE(checkpoint::Write(dir.File("state/nic_plugin_state"), kCheckpointVersion, doc).ok());
  auto plugin = Create(Config(dir.File("state")), m.topology);
  CHECK(plugin->Snapshot().pods().empty());
  CHECK(plugin->state_file().corrupt);
  CHECK_THAT(plugin->state_file().problem, Contains("pod_entries.uid-x.c0.bandwidth_mbps"));
  CHECK_THAT(plugin->state_file().problem, Contains("-3"));
}

TEST_CASE("config: allowlist and options are checked", "[nic][config]") {
  auto list = ParseNicAllowlist("eth0,ns1/eth1");
  REQUIRE(list.ok());
  CHECK(*list == std::vector<std::string>{"eth0", "ns1/eth1"});
  CHECK(ParseNicAllowlist("")->empty());
  for (const char* bad : {"eth0,", ",eth0", "a/b/c", "/eth0", "ns1/"}) {
    INFO(bad);
    auto r = ParseNicAllowlist(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(r.status().message(), Contains("nic-allowlist"));
  }

  NicPluginConfig config;
  config.bandwidth_ratio = 0;
  CHECK_THAT(config.Validate().message(), Contains("bandwidth-ratio 0"));
  config.bandwidth_ratio = 1;
  config.bandwidth_resource_name = config.resource_name;
  CHECK_THAT(config.Validate().message(), Contains("bandwidth-resource-name"));

  // The allowlist selects by name, or by namespace and name.
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  NicPluginConfig only_eth1 = Config();
  only_eth1.allowlist = {"ns1/eth1", "eth9"};
  auto plugin = Create(only_eth1, m.topology);
  REQUIRE(plugin->Snapshot().nics().size() == 1);
  CHECK(plugin->Snapshot().nics()[0].key.ToString() == "ns1/eth1");
}

}  // namespace
}  // namespace qrm::nic
