// Bad input: every case is kInvalidArgument naming the key and the value, and leaves no state.
#include <cmath>
#include <limits>

#include "tests/unit/plugins/cpu/cpu_test_util.h"

namespace qrm::cpu::testing {

namespace pb = ::resourceplugin::v1alpha1;
namespace {

// Both Allocate and GetTopologyHints refuse `req`, naming every one of `mentions`; nothing is
// recorded or written.
void Refused(CpuPlugin& plugin, const pb::ResourceRequest& req,
             const std::vector<std::string>& mentions, const std::string& state_file = "") {
  const CpuState before = plugin.state();
  const std::string file_before = state_file.empty() ? "" : qrm::testing::ReadFile(state_file);
  auto alloc = plugin.Allocate(req);
  REQUIRE_FALSE(alloc.ok());
  CHECK(alloc.status().code() == StatusCode::kInvalidArgument);
  for (const std::string& m : mentions) CHECK_THAT(alloc.status().message(), Catch::Contains(m));
  auto hints = plugin.GetTopologyHints(req);
  REQUIRE_FALSE(hints.ok());
  CHECK(hints.status().code() == StatusCode::kInvalidArgument);
  CHECK(plugin.state() == before);
  if (!state_file.empty()) CHECK(qrm::testing::ReadFile(state_file) == file_before);
}

TEST_CASE("bad requests are refused naming the field and value", "[cpu][bad-input]") {
  TempDir dir;
  CpuPluginConfig config;
  config.state_dir = dir.path();
  auto plugin = MakePlugin(FakeTopology("doc80"), config);
  const std::string file = dir.File("cpu_plugin_state");

  SECTION("unknown qos level") {
    Refused(*plugin, Request("p", "", 2, {{"katalyst.kubewharf.io/qos_level", "gold_cores"}}),
            {"katalyst.kubewharf.io/qos_level", "gold_cores"}, file);
  }
  SECTION("malformed memory_enhancement") {
    Refused(*plugin,
            Request("p", "", 2,
                    {{"katalyst.kubewharf.io/qos_level", "dedicated_cores"},
                     {"katalyst.kubewharf.io/memory_enhancement", "{numa_binding: yes"}}),
            {"katalyst.kubewharf.io/memory_enhancement", "{numa_binding: yes"}, file);
  }
  SECTION("role missing from the table") {
    Refused(*plugin, Request("p", "mystery-role", 2), {"kubernetes.io/pod-role", "mystery-role"},
            file);
  }
  SECTION("negative CPUs") {
    Refused(*plugin, Request("p", "", -1), {"cpu", "-1"}, file);
  }
  SECTION("NaN CPUs") {
    Refused(*plugin, Request("p", "", std::numeric_limits<double>::quiet_NaN()), {"cpu", "nan"},
            file);
  }
  SECTION("absurd CPUs") {
    Refused(*plugin, Request("p", "", 1e9), {"cpu", "1000000000"}, file);
  }
  SECTION("dedicated larger than the machine") {
    Refused(*plugin, Request("p", "batch", 81), {"cpu", "81"}, file);
  }
  SECTION("dedicated of zero CPUs") {
    Refused(*plugin, Request("p", "batch", 0), {"cpu", "at least one CPU"}, file);
  }
  SECTION("a hint naming a node the machine lacks") {
    Refused(*plugin, WithHint(Request("p", "batch", 2), {5}), {"hint.nodes", "5"}, file);
  }
  SECTION("no pod uid") {
    Refused(*plugin, Request("", "", 2), {"pod_uid"}, file);
  }
  CHECK(plugin->state().ContainerCount() == 0);
}

// Create refuses the config, naming `mentions`.
void ConfigRefused(CpuPluginConfig config, const std::vector<std::string>& mentions,
                   const std::string& shape = "doc80") {
  auto plugin = CpuPlugin::Create(FakeTopology(shape), std::move(config));
  REQUIRE_FALSE(plugin.ok());
  CHECK(plugin.status().code() == StatusCode::kInvalidArgument);
  for (const std::string& m : mentions) CHECK_THAT(plugin.status().message(), Catch::Contains(m));
}

TEST_CASE("bad configuration is refused naming the key and value", "[cpu][bad-input]") {
  CpuPluginConfig config;
  SECTION("reserved CPUs not on the machine") {
    config.reserved_cpus = "0-1,78-81,90";
    ConfigRefused(config, {"reserved-cpus", "0-1,78-81,90", "CPUs 80-81,90 are not online"});
  }
  SECTION("malformed reserved list") {
    config.reserved_cpus = "0-x";
    ConfigRefused(config, {"reserved-cpus", "0-x"});
  }
  SECTION("both reserved keys") {
    config.reserved_cpus = "0-1";
    config.reserved_cpu_count = 2;
    ConfigRefused(config, {"reserved-cpus", "reserved-cpu-count"});
  }
  SECTION("negative reserved count") {
    config.reserved_cpu_count = -2;
    ConfigRefused(config, {"reserved-cpu-count -2"});
  }
  SECTION("negative reclaimed pool") {
    config.reclaimed_pool_size = -1;
    ConfigRefused(config, {"reclaimed-pool-size -1"});
  }
  SECTION("reclaimed pool larger than the machine allows") {
    config.reclaimed_pool_size = 80;
    ConfigRefused(config, {"reclaimed-pool-size", "pool size 80 is above 79"});
  }
  SECTION("malformed role table") {
    config.roles_json = R"({"web": {"qos_level": "platinum"}})";
    ConfigRefused(config, {"roles", "web", "platinum"});
  }
}

TEST_CASE("bad pool resizes are refused and keep the old sizes", "[cpu][bad-input]") {
  auto plugin = MakePlugin(FakeTopology("doc80"));
  const CpuPools before = plugin->pools();
  const auto refused = [&](const PoolSizes& sizes, const std::string& mention) {
    const Status s = plugin->ResizePools(sizes);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(s.message(), Catch::Contains(mention));
    CHECK(plugin->pools() == before);
  };
  refused({.reclaimed = -1}, "reclaimed: pool size -1");
  refused({.reclaimed = 80}, "reclaimed: pool size 80");
  refused({.shared = 80}, "shared: pool size 80");
  refused({.reclaimed = 40, .shared = 41}, "reclaimed 40 + shared 41");
}

}  // namespace
}  // namespace qrm::cpu::testing
