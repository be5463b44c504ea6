// Restart from the checkpoint: same answers, nothing handed out twice, other machines refused,
// failed writes leave no trace.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <sstream>

#include <spdlog/sinks/ostream_sink.h>

#include "checkpoint/checkpoint_file.h"
#include "common/log.h"
#include "common/metrics/metrics.h"
#include "common/protocol_keys.h"
#include "plugins/cpu/state_checkpoint.h"
#include "tests/unit/plugins/cpu/cpu_test_util.h"

namespace qrm::cpu::testing {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

const std::map<std::string, std::string> kDedicated = {
    {"katalyst.kubewharf.io/qos_level", "dedicated_cores"}};

CpuPluginConfig DocConfig(const TempDir& dir) {
  CpuPluginConfig config;
  config.state_dir = dir.path();
  config.reserved_cpus = "0-1,40-41";
  return config;
}

TEST_CASE("a restarted plugin gives the same answers and never allocates twice", "[cpu][restart]") {
  TempDir dir;
  const auto topology = FakeTopology("doc80");
  std::map<std::string, std::string> before;
  pb::ResourceAllocationInfo storage;
  {
    auto first = MakePlugin(topology, DocConfig(dir));
    storage = AllocateOk(*first, WithHint(Request("s", "storage-service", 20), {0}));
    AllocateOk(*first, WithHint(Request("r", "reranker", 10), {1}));
    AllocateOk(*first, Request("u", "", 3.5, kDedicated));
    AllocateOk(*first, Request("web", "online-micro_service", 2));
    AllocateOk(*first, Request("etl", "ETL", 1));
    REQUIRE(first->ResizePools({.reclaimed = 10}).ok());
    before = Cpusets(*first);
  }
  auto second = MakePlugin(topology, DocConfig(dir));
  CHECK(Cpusets(*second) == before);
  CHECK(second->reclaimed_size() == 10);
  // Allocate replayed for a container it holds: the same answer.
  const auto again = AllocateOk(*second, WithHint(Request("s", "storage-service", 20), {0}));
  CHECK(again.allocation_result() == storage.allocation_result());
  CHECK(again.SerializeAsString() == storage.SerializeAsString());
  // Anti-affinity survived the restart: a reranker still cannot join node 0.
  CHECK(Hints(*second, Request("r2", "reranker", 2)) == "1*");
  // A new dedicated container gets CPUs nobody holds.
  const auto fresh = AllocateOk(*second, Request("u2", "", 8, kDedicated));
  auto fresh_cpus = CpuSet::Parse(fresh.allocation_result());
  REQUIRE(fresh_cpus.ok());
  // state() returns a snapshot; keep it alive while we look into it.
  const CpuState snapshot = second->state();
  for (const auto& [who, cpus] : before) {
    auto held = CpuSet::Parse(cpus);
    REQUIRE(held.ok());
    const ContainerAllocation* c = snapshot.Find(who.substr(0, who.find('/')), "container0");
    REQUIRE(c != nullptr);
    if (c->dedicated()) CHECK_FALSE(fresh_cpus->Overlaps(*held));
  }
}

TEST_CASE("a checkpoint from another machine shape is refused with the way out", "[cpu][restart]") {
  TempDir dir;
  {
    auto doc = MakePlugin(FakeTopology("doc80"), DocConfig(dir));
    AllocateOk(*doc, WithHint(Request("s", "storage-service", 20), {0}));
  }
  CpuPluginConfig config;
  config.state_dir = dir.path();
  config.roles_json = kDocRoles;
  auto other = CpuPlugin::Create(FakeTopology("4x32smt"), config);
  REQUIRE_FALSE(other.ok());
  CHECK(other.status().code() == StatusCode::kFailedPrecondition);
  const std::string& message = other.status().message();
  CHECK_THAT(message, Catch::Contains("different CPU layout"));
  CHECK_THAT(message, Catch::Contains("cpus 0-79"));
  CHECK_THAT(message, Catch::Contains("cpus 0-127"));
  CHECK_THAT(message, Catch::Contains("Drain the node"));
  CHECK_THAT(message, Catch::Contains("--reset-state"));
  // The file is left for the operator.
  CHECK(std::filesystem::exists(dir.File("cpu_plugin_state")));

  // --reset-state moves it aside and starts empty.
  config.reset_state = true;
  auto reset = CpuPlugin::Create(FakeTopology("4x32smt"), config);
  INFO(reset.status().ToString());
  REQUIRE(reset.ok());
  CHECK((*reset)->state().ContainerCount() == 0);
  int moved_aside = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    if (entry.path().filename().string().starts_with("cpu_plugin_state.reset-")) ++moved_aside;
  }
  CHECK(moved_aside == 1);
}

TEST_CASE("dedicated CPUs that became reserved stop the plugin", "[cpu][restart]") {
  TempDir dir;
  {
    auto first = MakePlugin(FakeTopology("doc80"), DocConfig(dir));
    CHECK(
        AllocateOk(*first, WithHint(Request("s", "storage-service", 4), {0})).allocation_result() ==
        "2-5");
  }
  CpuPluginConfig config = DocConfig(dir);
  config.roles_json = kDocRoles;
  config.reserved_cpus = "0-3,40-43";
  auto second = CpuPlugin::Create(FakeTopology("doc80"), config);
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(second.status().message(),
             Catch::Contains("dedicated CPUs 2-3 that are now reserved"));
}

// Every kind of unusable state file: detected, moved aside, counted; the plugin starts empty
// and a replay with the previous CPUs (what the host sends) gets exactly those CPUs back.
TEST_CASE("an unusable checkpoint is moved aside and replays restore the CPUs", "[cpu][restart]") {
  TempDir dir;
  const auto topology = FakeTopology("doc80");
  std::string held;
  {
    auto first = MakePlugin(topology, DocConfig(dir));
    held = AllocateOk(*first, Request("u", "", 4, kDedicated)).allocation_result();
  }
  const std::string path = dir.File("cpu_plugin_state");
  const std::string good = qrm::testing::ReadFile(path);
  const std::string kind = GENERATE("bit flip", "truncated", "empty", "another version");
  INFO(kind);
  std::string damaged;
  if (kind == "bit flip") {
    damaged = good;
    damaged[damaged.size() / 2] ^= 0x20;
  } else if (kind == "truncated") {
    damaged = good.substr(0, good.size() / 3);
  } else if (kind == "another version") {
    checkpoint::ReadOptions any;
    any.min_version = 0;
    any.max_version = 1000;
    auto cp = checkpoint::Parse(good, path, any);
    REQUIRE(cp.ok());
    REQUIRE(checkpoint::Write(path, 99, cp->data).ok());
    damaged = qrm::testing::ReadFile(path);
  }
  qrm::testing::WriteFile(path, damaged);
  auto& corrupt = metrics::Default().GetCounter("qrm_checkpoint_corrupt_total", "",
                                                {{"component", "cpu-plugin"}});
  const double corrupt_before = corrupt.Value();

  auto plugin = MakePlugin(topology, DocConfig(dir));
  CHECK(corrupt.Value() == corrupt_before + 1);
  CHECK(plugin->state().ContainerCount() == 0);
  int aside = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("cpu_plugin_state.corrupt-", 0) == 0) {
      ++aside;
      CHECK(qrm::testing::ReadFile(entry.path().string()) == damaged);  // the evidence, intact
    }
  }
  CHECK(aside == 1);

  // The host's replay names the CPUs the container had: it gets them, not the first free ones.
  pb::ResourceRequest replay = Request("u", "", 4, kDedicated);
  (*replay.mutable_annotations())[kPreviousAllocationAnnotation] = held;
  const std::string again = AllocateOk(*plugin, replay).allocation_result();
  CHECK(again == held);
  // Taken CPUs are not replayed onto a second container: it gets other CPUs.
  pb::ResourceRequest other = Request("v", "", 4, kDedicated);
  (*other.mutable_annotations())[kPreviousAllocationAnnotation] = held;
  auto other_cpus = CpuSet::Parse(AllocateOk(*plugin, other).allocation_result());
  auto held_cpus = CpuSet::Parse(held);
  REQUIRE(other_cpus.ok());
  REQUIRE(held_cpus.ok());
  CHECK_FALSE(other_cpus->Overlaps(*held_cpus));
}

TEST_CASE("a malformed previous-allocation annotation is refused by name", "[cpu][restart]") {
  TempDir dir;
  auto plugin = MakePlugin(FakeTopology("doc80"), DocConfig(dir));
  pb::ResourceRequest replay = Request("u", "", 2, kDedicated);
  (*replay.mutable_annotations())[kPreviousAllocationAnnotation] = "2-900";
  auto refused = plugin->Allocate(replay);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(refused.status().message(),
             Catch::Contains("qrm.io/previous-allocation") && Catch::Contains("2-900"));
  CHECK(plugin->state().ContainerCount() == 0);
}

TEST_CASE("a failed checkpoint write fails the call and changes nothing", "[cpu][restart]") {
  TempDir dir;
  auto fail = std::make_shared<std::atomic<bool>>(false);
  CpuPluginConfig config = DocConfig(dir);
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
  auto plugin = MakePlugin(FakeTopology("doc80"), config);
  AllocateOk(*plugin, Request("web", "online-micro_service", 2));
  const CpuState before = plugin->state();
  const std::string file_before = qrm::testing::ReadFile(dir.File("cpu_plugin_state"));
  const std::string journal_before = qrm::testing::ReadFile(dir.File("cpu_plugin_state.journal"));

  // The plugin says why in its own log (it used to say nothing).
  auto log = std::make_shared<std::ostringstream>();
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(*log);
  qrm::Logger("cpu-plugin")->sinks().push_back(sink);
  *fail = true;
  auto alloc = plugin->Allocate(WithHint(Request("s", "storage-service", 20), {0}));
  auto& sinks = qrm::Logger("cpu-plugin")->sinks();
  sinks.erase(std::remove(sinks.begin(), sinks.end(), sink), sinks.end());
  REQUIRE_FALSE(alloc.ok());
  CHECK(alloc.status().code() == StatusCode::kResourceExhausted);
  CHECK_THAT(alloc.status().message(), Catch::Contains("injected: disk full"));
  CHECK_THAT(log->str(), Catch::Contains("cannot write the state file") &&
                             Catch::Contains(dir.File("cpu_plugin_state")) &&
                             Catch::Contains("injected: disk full"));
  CHECK(plugin->state() == before);
  CHECK(plugin->RemovePod("web").code() == StatusCode::kResourceExhausted);
  CHECK(plugin->state() == before);
  CHECK_FALSE(plugin->ResizePools({.reclaimed = 20}).ok());
  CHECK(plugin->state() == before);
  CHECK(qrm::testing::ReadFile(dir.File("cpu_plugin_state")) == file_before);
  // The failed appends were taken back: a restart could not apply them.
  CHECK(qrm::testing::ReadFile(dir.File("cpu_plugin_state.journal")) == journal_before);

  // Once the disk recovers the same container is admitted as if nothing happened.
  *fail = false;
  CHECK(
      AllocateOk(*plugin, WithHint(Request("s", "storage-service", 20), {0})).allocation_result() ==
      "2-21");
}

TEST_CASE("a version 1 state file is upgraded to the ledger without losing a container",
          "[cpu][restart]") {
  TempDir dir;
  const auto topology = FakeTopology("doc80");
  CpuState v1_state;
  std::map<std::string, std::string> before;
  {
    // What an older plugin held, written in its format (the whole state in one file).
    auto in_memory = MakePlugin(topology, [] {
      CpuPluginConfig c;
      c.reserved_cpus = "0-1,40-41";
      return c;
    }());
    AllocateOk(*in_memory, WithHint(Request("s", "storage-service", 20), {0}));
    AllocateOk(*in_memory, Request("web", "online-micro_service", 2));
    REQUIRE(in_memory->ResizePools({.reclaimed = 6}).ok());
    v1_state = in_memory->state();
    before = Cpusets(*in_memory);
    REQUIRE(checkpoint::Write(dir.File("cpu_plugin_state"), kStateVersion,
                              EncodeState(in_memory->layout(), v1_state))
                .ok());
  }
  auto upgraded = MakePlugin(topology, DocConfig(dir));
  CHECK(Cpusets(*upgraded) == before);
  CHECK(upgraded->reclaimed_size() == 6);
  checkpoint::ReadOptions read;
  read.max_version = kLedgerVersion;
  auto file = checkpoint::Read(dir.File("cpu_plugin_state"), read);
  REQUIRE(file.ok());
  CHECK(file->version == kLedgerVersion);
  // And the upgraded ledger restarts like any other.
  upgraded.reset();
  CHECK(Cpusets(*MakePlugin(topology, DocConfig(dir))) == before);
}

}  // namespace
}  // namespace qrm::cpu::testing
