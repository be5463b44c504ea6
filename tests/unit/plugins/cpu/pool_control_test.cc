// The pool control file: parsing, atomic writes, and the watcher resizing a running plugin.
#include "plugins/cpu/pool_control.h"

#include <atomic>
#include <filesystem>
#include <mutex>

#include "plugins/cpu/pool_control_watcher.h"
#include "testing/child_process.h"
#include "tests/unit/plugins/cpu/cpu_test_util.h"

namespace qrm::cpu::testing {
namespace {

TEST_CASE("pool control JSON and --set-pools text parse strictly", "[cpu][control]") {
  auto both = ParsePoolControl(R"({"reclaimed": 52, "shared": 28})");
  REQUIRE(both.ok());
  CHECK(*both == PoolSizes{52, 28});
  auto cli = ParseSetPools("reclaimed=52,shared=28");
  REQUIRE(cli.ok());
  CHECK(*cli == PoolSizes{52, 28});
  CHECK(FormatPoolControl(*cli) == "{\"reclaimed\":52,\"shared\":28}\n");
  auto round_trip = ParsePoolControl(FormatPoolControl(*cli));
  REQUIRE(round_trip.ok());
  CHECK(*round_trip == *cli);

  const auto bad_json = [](const std::string& json, const std::string& mention) {
    auto r = ParsePoolControl(json);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(r.status().message(), Catch::Contains(mention));
  };
  bad_json(R"({"shared": 0})", "key \"shared\": invalid value 0");
  bad_json(R"({"reclaimed": -3})", "invalid value -3");
  bad_json(R"({"reclaimed": 2.5})", "invalid value 2.5");
  bad_json(R"({"reclaimed": "52"})", "invalid value \"52\"");
  bad_json(R"({"reclaimed": 100000})", "invalid value 100000");
  bad_json(R"({"offline": 4})", "unknown key \"offline\"");
  bad_json(R"({})", "names no pool");
  bad_json(R"([4])", "not a JSON object");
  bad_json(R"({"reclaimed": )", "invalid JSON");

  const auto bad_cli = [](const std::string& text, const std::string& mention) {
    auto r = ParseSetPools(text);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(r.status().message(), Catch::Contains("--set-pools"));
    CHECK_THAT(r.status().message(), Catch::Contains(mention));
  };
  bad_cli("reclaimed", "\"reclaimed\" is not POOL=SIZE");
  bad_cli("reclaimed=lots", "invalid value \"lots\"");
  bad_cli("reclaimed=4x", "invalid value \"4x\"");
  bad_cli("offline=4", "unknown key \"offline\"");
  bad_cli("", "names no pool");
}

TEST_CASE("the control file is replaced atomically", "[cpu][control]") {
  TempDir dir;
  const std::string path = dir.File("pools.json");
  REQUIRE(WritePoolControlFile(path, {.reclaimed = 8}).ok());
  REQUIRE(WritePoolControlFile(path, {.reclaimed = 52}).ok());
  auto read = ReadPoolControlFile(path);
  REQUIRE(read.ok());
  CHECK(*read == PoolSizes{52, std::nullopt});
  // No temp file is left behind.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++files;
  }
  CHECK(files == 1);
  CHECK(ReadPoolControlFile(dir.File("missing.json")).status().code() == StatusCode::kNotFound);
}

TEST_CASE("the watcher resizes a running plugin and bad files keep the old sizes",
          "[cpu][control]") {
  TempDir dir;
  CpuPluginConfig config;
  config.state_dir = dir.path();
  auto plugin = MakePlugin(FakeTopology("doc80"), config);
  AllocateOk(*plugin, Request("web", "online-micro_service", 2));
  AllocateOk(*plugin, Request("etl", "ETL", 2));
  CHECK(plugin->pool_control_path() == dir.File("pools.json"));

  std::atomic<int> refused{0};
  std::mutex mu;
  std::string last_error;
  PoolControlWatcher watcher(plugin->pool_control_path(), [&] {
    if (Status s = plugin->ReloadPoolControlFile(); !s.ok()) {
      std::lock_guard lock(mu);
      last_error = s.message();
      ++refused;
    }
  });
  REQUIRE(watcher.Start().ok());

  REQUIRE(WritePoolControlFile(plugin->pool_control_path(), {.reclaimed = 52}).ok());
  REQUIRE(qrm::testing::WaitFor([&] { return plugin->reclaimed_size() == 52; }));
  CHECK(Cpusets(*plugin).at("etl/container0") == "14-39,54-79");
  CHECK(Cpusets(*plugin).at("web/container0") == "0-13,40-53");

  // Too large for the machine: logged and ignored. A plain (non-atomic) write is seen too.
  qrm::testing::WriteFile(plugin->pool_control_path(), R"({"reclaimed": 500})");
  REQUIRE(WritePoolControlFile(dir.File("other.json"), {.reclaimed = 6}).ok());  // not ours
  REQUIRE(qrm::testing::WaitFor([&] { return refused == 1; }));
  {
    std::lock_guard lock(mu);
    CHECK_THAT(last_error, Catch::Contains("pools.json"));
    CHECK_THAT(last_error, Catch::Contains("reclaimed: pool size 500"));
  }
  CHECK(plugin->reclaimed_size() == 52);
  CHECK(Cpusets(*plugin).at("etl/container0") == "14-39,54-79");
  REQUIRE(WritePoolControlFile(plugin->pool_control_path(), {.shared = 76}).ok());
  REQUIRE(qrm::testing::WaitFor([&] { return plugin->reclaimed_size() == 4; }));
  CHECK(Cpusets(*plugin).at("etl/container0") == "38-39,78-79");
  watcher.Stop();
}

TEST_CASE("a control file written while the plugin was down applies at start", "[cpu][control]") {
  TempDir dir;
  CpuPluginConfig config;
  config.state_dir = dir.path();
  { MakePlugin(FakeTopology("doc80"), config); }
  REQUIRE(WritePoolControlFile(dir.File("pools.json"), {.reclaimed = 52}).ok());
  auto plugin = MakePlugin(FakeTopology("doc80"), config);
  CHECK(plugin->pools().reclaimed.ToString() == "14-39,54-79");
  // It wins over an explicit --reclaimed-pool-size, which only sets the starting size.
  config.reclaimed_pool_size = 8;
  auto flagged = MakePlugin(FakeTopology("doc80"), config);
  CHECK(flagged->reclaimed_size() == 52);
}

}  // namespace
}  // namespace qrm::cpu::testing
