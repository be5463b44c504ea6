// The reconcile loop and garbage collection against real plugin processes.
#include "tests/integration/host/host_fixture.h"

namespace qrm::host::testing {
namespace {

TEST_CASE("reconcile applies each changed container exactly once", "[reconcile]") {
  HostFixture f;
  Host& host = f.StartHost();
  const std::string result_file = f.File("pool.txt");
  f.StartPlugin("test.qrm.io/pool", {"--need-reconcile", "--oci-property", "CpusetCpus", "--result",
                                     "0-37,40-77", "--result-file", result_file});
  f.StartPlugin("test.qrm.io/static");  // does not ask for reconciling
  REQUIRE(f.WaitRegistered("test.qrm.io/pool"));
  REQUIRE(f.WaitRegistered("test.qrm.io/static"));
  for (const char* pod : {"p1", "p2", "p3"}) {
    REQUIRE(host.admission()
                .Admit(Request(pod, "c0", {{"test.qrm.io/pool", 4}, {"test.qrm.io/static", 1}}))
                .ok());
  }
  f.view().Set({"p1", "p2", "p3"});

  auto unchanged = host.reconciler().RunOnce();
  REQUIRE(unchanged.ok());
  // Every plugin is polled (for the rebuild); only need_reconcile ones have values applied.
  CHECK(unchanged->plugins_polled == 2);
  CHECK(unchanged->resources_changed == 0);
  CHECK(f.applier().calls().empty());

  qrm::testing::WriteFile(result_file, "0-13,40-53\n");
  auto changed = host.reconciler().RunOnce();
  REQUIRE(changed.ok());
  CHECK(changed->resources_changed == 3);
  const auto calls = f.applier().calls();
  REQUIRE(calls.size() == 3);
  for (const auto& call : calls) {
    CHECK(call.update.resources.cpuset_cpus() == "0-13,40-53");
    CHECK(call.update.resources.cpuset_mems() == call.update.envs.at("TEST_PLUGIN_NODES"));
  }
  CHECK(
      host.state().GetContainer("p2", "c0")->resources.at("test.qrm.io/pool").allocation_result() ==
      "0-13,40-53");

  f.applier().clear();
  auto steady = host.reconciler().RunOnce();
  REQUIRE(steady.ok());
  CHECK(steady->resources_changed == 0);
  CHECK(f.applier().calls().empty());
}

TEST_CASE("a failed runtime update is retried on the next tick", "[reconcile]") {
  HostFixture f;
  Host& host = f.StartHost();
  const std::string result_file = f.File("pool.txt");
  f.StartPlugin("test.qrm.io/pool", {"--need-reconcile", "--oci-property", "CpusetCpus", "--result",
                                     "0-3", "--result-file", result_file});
  REQUIRE(f.WaitRegistered("test.qrm.io/pool"));
  REQUIRE(host.admission().Admit(Request("p1", "c0", {{"test.qrm.io/pool", 1}})).ok());
  f.view().Set({"p1"});
  qrm::testing::WriteFile(result_file, "4-7\n");
  f.applier().set_fail(true);
  auto failed = host.reconciler().RunOnce();
  REQUIRE(failed.ok());
  CHECK(failed->apply_failures == 1);
  f.applier().set_fail(false);
  f.applier().clear();
  auto retried = host.reconciler().RunOnce();
  REQUIRE(retried.ok());
  CHECK(retried->containers_applied == 1);
  REQUIRE(f.applier().calls().size() == 1);
  CHECK(f.applier().calls()[0].update.resources.cpuset_cpus() == "4-7");
}

TEST_CASE("garbage collection keeps a pod until every live plugin released it", "[reconcile]") {
  HostFixture f;
  Host& host = f.StartHost();
  f.StartPlugin("test.qrm.io/a");
  f.StartPlugin("test.qrm.io/b", {"--fail", "RemovePod"});
  REQUIRE(f.WaitRegistered("test.qrm.io/a"));
  REQUIRE(f.WaitRegistered("test.qrm.io/b"));
  REQUIRE(host.admission()
              .Admit(Request("gone", "c0", {{"test.qrm.io/a", 1}, {"test.qrm.io/b", 1}}))
              .ok());
  REQUIRE(host.admission().Admit(Request("alive", "c0", {{"test.qrm.io/a", 1}})).ok());
  f.view().Set({"alive"});

  auto first = host.reconciler().RunOnce();
  REQUIRE(first.ok());
  CHECK(first->pods_collected == 0);
  CHECK(host.state().GetPod("gone") != nullptr);
  CHECK(f.Calls("test.qrm.io/b", "RemovePod") == 1);

  // Plugin b comes back working: the next tick finishes the job.
  const auto old_endpoint = host.registry().Find("test.qrm.io/b");
  f.StopPlugin("test.qrm.io/b");
  f.StartPlugin("test.qrm.io/b");
  REQUIRE(WaitFor([&] {
    auto e = host.registry().Find("test.qrm.io/b");
    return e != old_endpoint && !e->stopped();
  }));
  auto second = host.reconciler().RunOnce();
  REQUIRE(second.ok());
  CHECK(second->pods_collected == 1);
  CHECK(host.state().GetPod("gone") == nullptr);
  CHECK(host.state().GetPod("alive") != nullptr);
}

}  // namespace
}  // namespace qrm::host::testing
