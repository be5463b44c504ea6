// The memory plugin's ledger: restart, a changed machine, corruption, failed writes, and the
// upgrade of a version 1 state file.
#include "plugins/memory/memory_ledger.h"

#include <atomic>
#include <filesystem>
#include <memory>

#include <catch2/catch.hpp>
#include <google/protobuf/util/message_differencer.h>

#include "checkpoint/checkpoint_file.h"
#include "plugins/memory/memory_checkpoint.h"
#include "tests/unit/plugins/memory/memory_test_util.h"

namespace qrm::memory {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

namespace fs = std::filesystem;
using Catch::Contains;
using qrm::testing::TempDir;
using namespace testutil;

pb::GetResourcesAllocationResponse AllocationsOk(MemoryPlugin& plugin) {
  auto r = plugin.GetResourcesAllocation();
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return *r;
}

int FilesStartingWith(const std::string& dir, const std::string& prefix) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().starts_with(prefix)) ++n;
  }
  return n;
}

TEST_CASE("a restarted plugin restores the same state", "[memory][checkpoint]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::FourBy32SmtShape(), dir);
  const std::string state_dir = dir.File("state");
  const uint64_t allocatable = 64 * kGiB - 524288000;
  pb::GetResourcesAllocationResponse before;
  {
    auto plugin = Create(Config(state_dir), m.topology);
    AllocateOk(*plugin, WithHint(Request("a", 100.0 * kGiB, "reranker"), {0, 1}, false));
    AllocateOk(*plugin, WithHint(Request("db", 2.0 * kGiB, "database"), {2}));
    AllocateOk(*plugin, Request("web", 3.0 * kGiB, "web"));
    AllocateOk(*plugin, WithHint(Request("gone", 1.0 * kGiB, "reranker"), {3}));
    REQUIRE(plugin->RemovePod("uid-gone").ok());
    before = AllocationsOk(*plugin);
  }
  auto plugin = Create(Config(state_dir), m.topology);
  CHECK(google::protobuf::util::MessageDifferencer::Equals(before, AllocationsOk(*plugin)));
  const MemoryState state = plugin->Snapshot();
  CHECK(state.pods().size() == 3);
  CHECK(state.UnboundBytes() == 3 * kGiB);
  CHECK(state.AllocatedOn(0) == allocatable);  // node 0 was filled first
  CHECK(state.AllocatedOn(1) == 100 * kGiB - allocatable);
  CHECK(state.AllocatedOn(2) == 2 * kGiB);
  CHECK(state.AllocatedOn(3) == 0);
  const ContainerMemory* a = state.Find("uid-a", "c0");
  REQUIRE(a != nullptr);
  CHECK_FALSE(a->hint_preferred);
  const ContainerMemory* db = state.Find("uid-db", "c0");
  REQUIRE(db != nullptr);
  CHECK(db->numa_exclusive);
  CHECK(db->role == "database");
  // The restored exclusivity still holds: nobody else NUMA-bound on node 2.
  auto refused = plugin->Allocate(WithHint(Request("x", 1.0 * kGiB, "reranker"), {2}));
  CHECK(refused.status().code() == StatusCode::kResourceExhausted);
  CHECK_THAT(refused.status().message(), Contains("NUMA node 2 is held exclusively by pod"));
}

TEST_CASE("a checkpoint from a machine with other NUMA nodes is refused", "[memory][checkpoint]") {
  TempDir dir;
  FakeMachine doc = Generate(machine::fake::Doc80Shape(), dir, "doc80");
  FakeMachine big = Generate(machine::fake::FourBy32SmtShape(), dir, "4x32");
  const std::string state_dir = dir.File("state");
  {
    auto plugin = Create(Config(state_dir), doc.topology);
    AllocateOk(*plugin, WithHint(Request("a", 4.0 * kGiB, "reranker"), {1}));
  }
  const std::string file = state_dir + "/memory_plugin_state";
  const std::string before = qrm::testing::ReadFile(file);

  auto refused = MemoryPlugin::Create(Config(state_dir), big.topology);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(refused.status().message(), Contains(file));
  CHECK_THAT(refused.status().message(), Contains("NUMA nodes \"0-1\""));
  CHECK_THAT(refused.status().message(), Contains("this machine has \"0-3\""));
  CHECK_THAT(refused.status().message(), Contains("--reset-state"));
  CHECK(qrm::testing::ReadFile(file) == before);

  // The documented way out: the old file is kept aside, the plugin starts empty.
  MemoryPluginConfig reset = Config(state_dir);
  reset.reset_state = true;
  auto plugin = Create(reset, big.topology);
  CHECK(plugin->Snapshot().pods().empty());
  CHECK(FilesStartingWith(state_dir, "memory_plugin_state.reset-") == 1);
  // And a fresh ledger for this machine is in place.
  auto ledger = sdk::ReadLedger(file);
  REQUIRE(ledger.ok());
  CHECK(ledger->settings.at("numa_nodes") == "0-3");
}

TEST_CASE("a larger reservation that no longer fits the recorded allocations is refused",
          "[memory][checkpoint]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::MemOnlyShape(), dir);
  const std::string state_dir = dir.File("state");
  {
    auto plugin = Create(Config(state_dir), m.topology);
    AllocateOk(*plugin, WithHint(Request("a", 30.0 * kGiB, "reranker"), {0}));
  }
  MemoryPluginConfig more = Config(state_dir);
  more.reserved.per_node[0] = 4 * kGiB;  // 28 GiB allocatable on node 0 now
  auto refused = MemoryPlugin::Create(more, m.topology);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kResourceExhausted);
  CHECK_THAT(refused.status().message(), Contains("pod \"uid-a\" container \"c0\""));
  CHECK_THAT(refused.status().message(), Contains("--reset-state"));
  CHECK_THAT(refused.status().message(), Contains("NUMA node 0"));

  // A smaller one is fine and shows in the restored numbers.
  MemoryPluginConfig less = Config(state_dir);
  less.reserved.per_node[0] = 100 << 20;
  auto plugin = Create(less, m.topology);
  CHECK(plugin->Snapshot().FreeOn(0) == 32 * kGiB - (100 << 20) - 30 * kGiB);
}

TEST_CASE("a corrupt checkpoint is moved aside and the plugin starts empty",
          "[memory][checkpoint]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  const std::string state_dir = dir.File("state");
  {
    auto plugin = Create(Config(state_dir), m.topology);
    AllocateOk(*plugin, WithHint(Request("a", 1.0 * kGiB, "reranker"), {0}));
  }
  const std::string file = state_dir + "/memory_plugin_state";
  const std::string truncated = qrm::testing::ReadFile(file).substr(0, 100);
  qrm::testing::WriteFile(file, truncated);

  auto plugin = Create(Config(state_dir), m.topology);
  CHECK(plugin->Snapshot().pods().empty());
  CHECK(plugin->state_file().corrupt);
  CHECK_THAT(plugin->state_file().problem, Contains(file));
  CHECK(FilesStartingWith(state_dir, "memory_plugin_state.corrupt-") == 1);
  CHECK(qrm::testing::ReadFile(plugin->state_file().set_aside) == truncated);
}

TEST_CASE("inconsistent ledger content is set aside, naming the entry and field",
          "[memory][checkpoint]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  const std::string state_dir = dir.File("state");
  {
    auto plugin = Create(Config(state_dir), m.topology);
    AllocateOk(*plugin, WithHint(Request("a", 1.0 * kGiB, "reranker"), {0}));
    REQUIRE(plugin->WriteSnapshot().ok());  // the entry in the snapshot, the journal empty
  }
  const std::string file = state_dir + "/memory_plugin_state";
  rapidjson::Document data = SnapshotData(file);
  rapidjson::Value& entry = data["pods"]["uid-a"]["c0"];
  auto& a = data.GetAllocator();
  struct Damage {
    const char* what;
    const char* field;
    const char* value;  // nullptr: the number 5
    const char* problem;
  };
  const Damage damage =
      GENERATE(Damage{"a quantity that is not a string", "quantity", nullptr,
                      "pod uid-a container c0: field \"quantity\""},
               Damage{"a quantity that is not a number of bytes", "quantity", "5Gi",
                      "quantity \"5Gi\": not a decimal number of bytes"},
               Damage{"per-node bytes that do not add up to the quantity", "quantity", "7",
                      "sum to 1073741824 bytes, not the container's 7"},
               Damage{"malformed per-node bytes", "node_bytes", "0:5", "node_bytes item \"0:5\""},
               Damage{"bytes on a node outside numa_nodes", "node_bytes", "1=1073741824",
                      "1073741824 bytes on node 1, which is outside nodes \"0\""});
  INFO(damage.what);
  if (damage.value == nullptr) {
    entry[damage.field].SetInt(5);
  } else {
    entry[damage.field].SetString(damage.value, a);
  }
  REQUIRE(checkpoint::Write(file, kLedgerVersion, data).ok());
  auto plugin = Create(Config(state_dir), m.topology);
  CHECK(plugin->Snapshot().pods().empty());
  CHECK(plugin->state_file().corrupt);
  CHECK_THAT(plugin->state_file().problem, Contains(damage.problem));
}

TEST_CASE("a version 1 state file is upgraded to the ledger without losing a container",
          "[memory][checkpoint]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::FourBy32SmtShape(), dir);
  const std::string state_dir = dir.File("state");
  const std::string file = state_dir + "/memory_plugin_state";
  pb::GetResourcesAllocationResponse before;
  rapidjson::Document v1;
  {
    // What an older plugin held, written in its format (the whole state in one file).
    auto in_memory = Create(Config(), m.topology);
    AllocateOk(*in_memory, WithHint(Request("a", 40.0 * kGiB, "reranker"), {0, 1}, false));
    AllocateOk(*in_memory, WithHint(Request("db", 2.0 * kGiB, "database"), {2}));
    AllocateOk(*in_memory, Request("web", 3.0 * kGiB, "web"));
    before = AllocationsOk(*in_memory);
    v1 = EncodeCheckpoint(in_memory->Snapshot());
  }
  fs::create_directories(state_dir);
  SECTION("a good file is upgraded, and restarts like any ledger") {
    REQUIRE(checkpoint::Write(file, kCheckpointVersion, v1).ok());
    auto upgraded = Create(Config(state_dir), m.topology);
    CHECK(google::protobuf::util::MessageDifferencer::Equals(before, AllocationsOk(*upgraded)));
    CHECK(SnapshotData(file)["pods"].MemberCount() == 3);
    upgraded.reset();
    auto again = Create(Config(state_dir), m.topology);
    CHECK(google::protobuf::util::MessageDifferencer::Equals(before, AllocationsOk(*again)));
    CHECK(again->Snapshot().UnboundBytes() == 3 * kGiB);
  }
  SECTION("an inconsistent one is set aside, naming the key") {
    v1["machineState"]["memory"]["0"]["Allocated"].SetString("5", v1.GetAllocator());
    REQUIRE(checkpoint::Write(file, kCheckpointVersion, v1).ok());
    auto plugin = Create(Config(state_dir), m.topology);
    CHECK(plugin->Snapshot().pods().empty());
    CHECK(plugin->state_file().corrupt);
    CHECK_THAT(plugin->state_file().problem, Contains("machineState.memory.0.Allocated"));
  }
}

TEST_CASE("a failed ledger write fails the RPC and changes nothing", "[memory][checkpoint]") {
  TempDir dir;
  FakeMachine m = Generate(machine::fake::Doc80Shape(), dir);
  const std::string state_dir = dir.File("state");
  auto fail = std::make_shared<std::atomic<bool>>(false);
  MemoryPluginConfig config = Config(state_dir);
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
  AllocateOk(*plugin, WithHint(Request("a", 1.0 * kGiB, "reranker"), {0}));
  const std::string files_before = LedgerFileBytes(state_dir + "/memory_plugin_state");

  *fail = true;
  auto r = plugin->Allocate(WithHint(Request("b", 2.0 * kGiB, "reranker"), {0}));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kResourceExhausted);
  CHECK_THAT(r.status().message(),
             Contains("persisting the allocation") && Contains("injected: disk full"));
  CHECK(plugin->Snapshot().Pod("uid-b") == nullptr);
  CHECK(plugin->Snapshot().AllocatedOn(0) == 1 * kGiB);

  CHECK_FALSE(plugin->RemovePod("uid-a").ok());
  CHECK(plugin->Snapshot().AllocatedOn(0) == 1 * kGiB);  // still held: the host retries
  // The failed appends were taken back: a restart could not apply them.
  CHECK(LedgerFileBytes(state_dir + "/memory_plugin_state") == files_before);

  *fail = false;
  REQUIRE(plugin->RemovePod("uid-a").ok());
  CHECK(plugin->Snapshot().AllocatedOn(0) == 0);
  AllocateOk(*plugin, WithHint(Request("b", 2.0 * kGiB, "reranker"), {0}));
}

}  // namespace
}  // namespace qrm::memory
