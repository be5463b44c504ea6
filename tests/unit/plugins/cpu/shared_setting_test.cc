// The pool control file's "shared" alone (what qrm-advisor writes): the shared pool keeps that
// size and the reclaimed pool gets the rest, yielding to dedicated admissions instead of having
// them refused; the setting survives restarts and a "reclaimed" write replaces it.
#include "plugins/cpu/pool_control.h"
#include "tests/unit/plugins/cpu/cpu_test_util.h"

namespace qrm::cpu::testing {
namespace {

const std::map<std::string, std::string> kDedicated = {
    {"katalyst.kubewharf.io/qos_level", "dedicated_cores"}};

TEST_CASE("a shared size setting takes dedicated CPUs out of the reclaimed pool first",
          "[cpu][control]") {
  TempDir dir;
  CpuPluginConfig config;
  config.state_dir = dir.path();
  auto plugin = MakePlugin(FakeTopology("nosmt"), config);  // 16 CPUs, none reserved
  AllocateOk(*plugin, Request("etl", "ETL", 1));
  AllocateOk(*plugin, Request("web", "", 1));
  REQUIRE(plugin->ResizePools({.shared = 4}).ok());
  CHECK(plugin->pools().reclaimed.Size() == 12);
  CHECK(plugin->pools().shared.Size() == 4);

  // 12 dedicated CPUs: an explicit reclaimed size of 12 would refuse them (13 must stay
  // free); the reclaimed pool yields instead and the shared pool keeps its 4.
  CHECK_FALSE(Hints(*plugin, Request("big", "", 12, kDedicated)).empty());
  AllocateOk(*plugin, Request("big", "", 12, kDedicated));
  CHECK(plugin->pools().reclaimed.Empty());
  CHECK(plugin->pools().shared.Size() == 4);
  CHECK(Cpusets(*plugin)["etl/container0"] == Cpusets(*plugin)["web/container0"]);  // shared

  // Beyond it the shared pool shrinks, down to one CPU; the last one is never handed out.
  AllocateOk(*plugin, Request("more", "", 3, kDedicated));
  CHECK(plugin->pools().shared.Size() == 1);
  auto refused = plugin->Allocate(Request("last", "", 1, kDedicated));
  CHECK(refused.status().code() == StatusCode::kResourceExhausted);

  // Freed dedicated CPUs go back to the reclaimed pool; the shared one is sized first.
  REQUIRE(plugin->RemovePod("more").ok());
  CHECK(plugin->pools().shared.Size() == 4);
  CHECK(plugin->pools().reclaimed.Empty());
  REQUIRE(plugin->RemovePod("big").ok());
  CHECK(plugin->pools().reclaimed.Size() == 12);

  // Durable, and a later reclaimed size replaces it (explicit sizes stay exact).
  plugin.reset();
  plugin = MakePlugin(FakeTopology("nosmt"), config);
  CHECK(plugin->state().shared_size == 4);
  CHECK(plugin->pools().reclaimed.Size() == 12);
  REQUIRE(plugin->ResizePools({.reclaimed = 12}).ok());
  CHECK(plugin->state().shared_size == 0);
  CHECK(Hints(*plugin, Request("big", "", 12, kDedicated)).empty());
  plugin.reset();
  plugin = MakePlugin(FakeTopology("nosmt"), config);
  CHECK(plugin->state().shared_size == 0);
  CHECK(plugin->reclaimed_size() == 12);
}

}  // namespace
}  // namespace qrm::cpu::testing
