// The reconcile loop's rebuild (qrm/reconcile/rebuild.h) against real plugin processes:
// allocations the host checkpoint lost are adopted or released, and allocations a plugin
// lost are replayed to it.
#include <fstream>

#include "tests/integration/host/host_fixture.h"

namespace qrm::host::testing {
namespace {

// Calls of `method` for `pod` in the call log of `resource`.
int CallsFor(HostFixture& f, const std::string& resource, const std::string& method,
             const std::string& pod) {
  std::ifstream in(f.CallLogPath(resource));
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(method + " " + pod + " ", 0) == 0) ++n;
  }
  return n;
}

constexpr const char* kPool = "test.qrm.io/pool";

TEST_CASE("allocations the host checkpoint lost are adopted, or released if the pod is gone",
          "[reconcile][rebuild]") {
  HostFixture f;
  f.StartHost();
  f.StartPlugin(kPool, {"--need-reconcile", "--oci-property", "CpusetCpus", "--result", "0-1",
                        "--state", f.File("pool-state.json")});
  REQUIRE(f.WaitRegistered(kPool));
  for (const char* pod : {"kept", "orphan"}) {
    REQUIRE(f.host().admission().Admit(Request(pod, "c0", {{kPool, 2}})).ok());
  }
  f.StopHost();
  // The host loses both pods: one file corrupt (moved aside at load), one gone.
  const std::string pods = f.state_dir() + "/pods/";
  qrm::testing::WriteFile(pods + "kept.json", "{\"version\":1,\"chec");
  REQUIRE(::unlink((pods + "orphan.json").c_str()) == 0);

  Host& host = f.StartHost();
  CHECK(host.state().recovered_from_corruption());
  CHECK(host.state().Snapshot().empty());
  REQUIRE(f.WaitRegistered(kPool));
  f.view().AddContainer({"kept", "web", "prod", "c0"});  // "orphan" is not in the runtime

  auto tick = host.reconciler().RunOnce();
  REQUIRE(tick.ok());
  CHECK(tick->containers_adopted == 1);
  CHECK(tick->orphans_released == 1);
  const auto adopted = host.state().GetContainer("kept", "c0");
  REQUIRE(adopted != nullptr);
  CHECK(adopted->resources.at(kPool).allocation_result() == "0-1");
  CHECK(host.state().GetPod("kept")->name == "web");
  CHECK(host.state().GetPod("kept")->ns == "prod");
  CHECK(host.state().GetPod("orphan") == nullptr);
  CHECK(CallsFor(f, kPool, "RemovePod", "orphan") == 1);
  CHECK(CallsFor(f, kPool, "RemovePod", "kept") == 0);
  // The adopted container's owned fields reach the runtime.
  const auto calls = f.applier().calls();
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].update.resources.cpuset_cpus() == "0-1");

  // Settled: the next tick changes nothing.
  f.applier().clear();
  auto steady = host.reconciler().RunOnce();
  REQUIRE(steady.ok());
  CHECK(steady->containers_adopted == 0);
  CHECK(steady->orphans_released == 0);
  CHECK(f.applier().calls().empty());
}

TEST_CASE("a plugin that lost an allocation gets Allocate replayed when it registers again",
          "[reconcile][rebuild]") {
  HostFixture f;
  Host& host = f.StartHost();
  const std::string state = f.File("pool-state.json");
  f.StartPlugin(kPool, {"--need-reconcile", "--oci-property", "CpusetCpus", "--result", "0-1",
                        "--state", state});
  REQUIRE(f.WaitRegistered(kPool));
  REQUIRE(host.admission().Admit(Request("live", "c0", {{kPool, 2}})).ok());
  REQUIRE(host.admission().Admit(Request("leaving", "c0", {{kPool, 2}})).ok());
  f.view().Set({"live"});  // "leaving" is no longer in the runtime: never replayed

  // The plugin restarts without its state, and now hands out CPU 1.
  const auto old_endpoint = host.registry().Find(kPool);
  f.StopPlugin(kPool);
  REQUIRE(::unlink(state.c_str()) == 0);
  f.StartPlugin(kPool, {"--need-reconcile", "--oci-property", "CpusetCpus", "--result", "1",
                        "--state", state});
  REQUIRE(WaitFor([&] {
    auto e = host.registry().Find(kPool);
    return e != nullptr && e != old_endpoint && !e->stopped();
  }));

  // Replayed at registration, before the endpoint was published: nothing left for the tick.
  CHECK(CallsFor(f, kPool, "Allocate", "live") == 2);  // admission, then the replay
  CHECK(CallsFor(f, kPool, "Allocate", "leaving") == 1);
  auto tick = host.reconciler().RunOnce();
  REQUIRE(tick.ok());
  CHECK(tick->replays == 0);
  // The plugin's new answer is stored at once and reaches the runtime on the next tick.
  CHECK(host.state().GetContainer("live", "c0")->resources.at(kPool).allocation_result() == "1");
  const auto calls = f.applier().calls();
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].uid == "live");
  CHECK(calls[0].update.resources.cpuset_cpus() == "1");
  CHECK(host.state().GetPod("leaving") == nullptr);  // collected, not replayed

  auto steady = host.reconciler().RunOnce();
  REQUIRE(steady.ok());
  CHECK(steady->replays == 0);
  CHECK(CallsFor(f, kPool, "Allocate", "live") == 2);
}

TEST_CASE("an allocation skipped under the ignore policy is made once the plugin is back",
          "[reconcile][rebuild]") {
  HostFixture f;
  Host& host = f.StartHost();
  f.StartPlugin(kPool, {"--need-reconcile", "--oci-property", "CpusetCpus", "--result", "1",
                        "--fail", "Allocate", "--fail-unavailable"});
  REQUIRE(f.WaitRegistered(kPool));
  auto admitted = host.admission().Admit(Request("shared", "c0", {{kPool, 1}}, "shared_cores"));
  REQUIRE(admitted.ok());
  REQUIRE(admitted->skipped_resources == std::vector<std::string>{kPool});
  // Admission marks what it skipped in the stored request (done here by hand when it
  // does not yet).
  state::ContainerAllocation stored = *host.state().GetContainer("shared", "c0");
  if (!stored.request.annotations().contains(kSkippedResourcesAnnotation)) {
    (*stored.request.mutable_annotations())[kSkippedResourcesAnnotation] = kPool;
    REQUIRE(host.state().PutContainer("shared", "pod-shared", "default", "c0", stored).ok());
  }
  f.view().Set({"shared"});

  // Still failing: the replay is attempted (and fails) each tick, nothing is stored.
  auto failing = host.reconciler().RunOnce();
  REQUIRE(failing.ok());
  CHECK(failing->replays == 1);
  CHECK(host.state().GetContainer("shared", "c0")->resources.empty());

  const auto old_endpoint = host.registry().Find(kPool);
  f.StopPlugin(kPool);
  f.StartPlugin(kPool, {"--need-reconcile", "--oci-property", "CpusetCpus", "--result", "1"});
  REQUIRE(WaitFor([&] {
    auto e = host.registry().Find(kPool);
    return e != nullptr && e != old_endpoint && !e->stopped();
  }));
  auto tick = host.reconciler().RunOnce();
  REQUIRE(tick.ok());
  CHECK(tick->replays == 1);
  CHECK(host.state().GetContainer("shared", "c0")->resources.at(kPool).allocation_result() == "1");
  const auto calls = f.applier().calls();
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].update.resources.cpuset_cpus() == "1");

  auto steady = host.reconciler().RunOnce();
  REQUIRE(steady.ok());
  CHECK(steady->replays == 0);
}

TEST_CASE("a skipped resource its plugin answers empty is not asked again until the pod goes",
          "[reconcile][rebuild]") {
  HostFixture f;
  Host& host = f.StartHost();
  f.StartPlugin(kPool, {"--need-reconcile", "--fail", "Allocate", "--fail-unavailable"});
  REQUIRE(f.WaitRegistered(kPool));
  auto admitted = host.admission().Admit(Request("shared", "c0", {{kPool, 1}}, "shared_cores"));
  REQUIRE(admitted.ok());
  REQUIRE(admitted->skipped_resources == std::vector<std::string>{kPool});
  f.view().Set({"shared"});

  // Back, with nothing to hold for the container: asked once, then left alone.
  const auto old_endpoint = host.registry().Find(kPool);
  f.StopPlugin(kPool);
  const int asked_before = CallsFor(f, kPool, "Allocate", "shared");  // the failed ones
  f.StartPlugin(kPool, {"--need-reconcile", "--allocate-nothing"});
  REQUIRE(WaitFor([&] {
    auto e = host.registry().Find(kPool);
    return e != nullptr && e != old_endpoint && !e->stopped();
  }));
  for (int i = 0; i < 4; ++i) REQUIRE(host.reconciler().RunOnce().ok());
  CHECK(CallsFor(f, kPool, "Allocate", "shared") == asked_before + 1);
  CHECK(host.state().GetContainer("shared", "c0")->resources.empty());
  CHECK(host.reconciler().RememberedEntries() > 0);

  // The pod goes: released, and nothing about it stays behind.
  f.view().Set({});
  auto collected = host.reconciler().RunOnce();
  REQUIRE(collected.ok());
  CHECK(collected->pods_collected == 1);
  CHECK(host.reconciler().RememberedEntries() == 0);
}

TEST_CASE("after a restart every checkpointed container is applied once", "[reconcile][rebuild]") {
  HostFixture f;
  f.StartHost();
  f.StartPlugin(kPool, {"--oci-property", "CpusetCpus", "--result", "0-1"});
  REQUIRE(f.WaitRegistered(kPool));
  for (const char* pod : {"running", "never-created"}) {
    REQUIRE(f.host().admission().Admit(Request(pod, "c0", {{kPool, 2}})).ok());
  }
  f.StopHost();  // as if killed between a checkpoint write and the runtime update

  Host& host = f.StartHost();
  REQUIRE(f.WaitRegistered(kPool));
  f.view().Set({"running", "never-created"});
  f.applier().set_missing("never-created");
  f.applier().set_fail(true);  // the shim has not resynchronized yet: retried
  REQUIRE(host.reconciler().RunOnce().ok());
  CHECK(f.applier().calls().size() == 2);
  f.applier().set_fail(false);
  f.applier().clear();
  auto tick = host.reconciler().RunOnce();
  REQUIRE(tick.ok());
  CHECK(tick->containers_applied == 1);
  const auto calls = f.applier().calls();
  REQUIRE(calls.size() == 1);  // "never-created" answered kNotFound: dropped
  CHECK(calls[0].uid == "running");
  CHECK(calls[0].update.resources.cpuset_cpus() == "0-1");

  f.applier().clear();
  REQUIRE(host.reconciler().RunOnce().ok());
  CHECK(f.applier().calls().empty());
}

}  // namespace
}  // namespace qrm::host::testing
