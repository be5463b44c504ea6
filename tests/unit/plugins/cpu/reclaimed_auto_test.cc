// The reclaimed pool's default size, "auto" (issue 12 item 5): no CPU set aside until
// reclaimed_cores work exists; explicit sizes stay exact.
#include "plugins/cpu/pool_control.h"
#include "tests/unit/plugins/cpu/cpu_test_util.h"

namespace qrm::cpu::testing {
namespace {

TEST_CASE("defaults on a 2-CPU node: shared containers get every CPU until reclaimed work comes",
          "[cpu][pools][auto]") {
  TempDir dir;
  CpuPluginConfig config;
  config.state_dir = dir.path();
  auto plugin = MakePlugin(FakeTopology("2cpu"), config);
  CHECK(plugin->pools().reclaimed.Empty());
  CHECK(plugin->pools().shared.ToString() == "0-1");
  const auto shared = AllocateOk(*plugin, Request("s1", "", 1));  // no annotation: shared_cores
  CHECK(shared.allocation_result() == "0-1");
  CHECK(shared.allocated_quantity() == 2);

  // The first reclaimed_cores container: the pool takes one CPU (the highest), shared follows.
  const auto etl = AllocateOk(*plugin, Request("r1", "ETL", 1));
  CHECK(etl.allocation_result() == "1");
  CHECK(Cpusets(*plugin)["s1/container0"] == "0");
  CHECK(AllocateOk(*plugin, Request("r2", "ETL", 1)).allocation_result() == "1");

  // A restart keeps "auto" (not the size it had reached).
  plugin.reset();
  plugin = MakePlugin(FakeTopology("2cpu"), config);
  CHECK(Cpusets(*plugin)["s1/container0"] == "0");
  CHECK(Cpusets(*plugin)["r1/container0"] == "1");

  // The last reclaimed container leaving gives the CPU back.
  REQUIRE(plugin->RemovePod("r1").ok());
  CHECK(Cpusets(*plugin)["s1/container0"] == "0");
  REQUIRE(plugin->RemovePod("r2").ok());
  CHECK(Cpusets(*plugin)["s1/container0"] == "0-1");
  CHECK(plugin->pools().reclaimed.Empty());
}

TEST_CASE("auto yields to dedicated containers, reclaimed work then shares the shared pool",
          "[cpu][pools][auto]") {
  auto plugin = MakePlugin(FakeTopology("2cpu"));
  AllocateOk(*plugin, Request("r1", "ETL", 1));
  CHECK(Cpusets(*plugin)["r1/container0"] == "1");
  // One CPU stays shared; the other may become exclusive although the auto pool held it.
  const auto batch = AllocateOk(*plugin, Request("d1", "batch", 1));
  CHECK(batch.allocation_result() == "0");
  CHECK(plugin->pools().reclaimed.Empty());
  CHECK(plugin->pools().shared.ToString() == "1");
  CHECK(Cpusets(*plugin)["r1/container0"] == "1");
  // Once the dedicated container leaves, the auto pool is back.
  REQUIRE(plugin->RemovePod("d1").ok());
  CHECK(Cpusets(*plugin)["r1/container0"] == "1");
  CHECK(plugin->pools().shared.ToString() == "0");
}

TEST_CASE("auto on the document's machine is example 1's pool, explicit sizes stay exact",
          "[cpu][pools][auto]") {
  const auto topology = FakeTopology("doc80");
  auto plugin = MakePlugin(topology);
  CHECK(plugin->pools().shared.ToString() == "0-79");
  CHECK(AllocateOk(*plugin, Request("etl", "ETL", 1)).allocation_result() == "38-39,78-79");
  CHECK(Cpusets(*plugin)["etl/container0"] == "38-39,78-79");

  CpuPluginConfig four;
  four.reclaimed_pool_size = 4;  // explicit: set aside with no reclaimed container
  CHECK(MakePlugin(topology, four)->pools().reclaimed.ToString() == "38-39,78-79");
  CpuPluginConfig zero;
  zero.reclaimed_pool_size = 0;  // explicit 0: reclaimed work always shares the shared pool
  auto none = MakePlugin(topology, zero);
  CHECK(AllocateOk(*none, Request("etl", "ETL", 1)).allocation_result() == "0-79");
}

TEST_CASE("the pool control file and --set-pools can return to auto", "[cpu][control][auto]") {
  auto parsed = ParseSetPools("reclaimed=auto");
  INFO(parsed.status().ToString());
  REQUIRE(parsed.ok());
  auto json = ParsePoolControl(R"({"reclaimed": "auto"})");
  REQUIRE(json.ok());
  CHECK(*json == *parsed);
  CHECK(FormatPoolControl(*parsed) == "{\"reclaimed\":\"auto\"}\n");
  CHECK_FALSE(ParsePoolControl(R"({"shared": "auto"})").ok());
  CHECK_FALSE(ParsePoolControl(R"({"reclaimed": "auto", "shared": 8})").ok());

  auto plugin = MakePlugin(FakeTopology("doc80"));
  REQUIRE(plugin->ResizePools(*ParseSetPools("reclaimed=52")).ok());
  CHECK(plugin->pools().reclaimed.Size() == 52);
  REQUIRE(plugin->ResizePools(*parsed).ok());
  CHECK(plugin->pools().reclaimed.Empty());
}

}  // namespace
}  // namespace qrm::cpu::testing
