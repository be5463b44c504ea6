// The host's CPU throttles (the watermark guard's quotas) against a real plugin process: the
// admin calls push at once, every update of the container keeps the quota, restores write the
// old quota back, and a restart, a failed push or an expired lease leave nothing behind.
#include <future>
#include <thread>

#include "qrm/admin/throttle_calls.h"
#include "tests/integration/host/host_fixture.h"

namespace qrm::host::testing {
namespace {

namespace adm = ::qrm::admin::v1;

adm::SetCpuThrottleRequest Throttle(const std::string& uid, int64_t quota, int64_t lease = 300) {
  adm::SetCpuThrottleRequest r;
  r.set_pod_uid(uid);
  r.set_container("c0");
  r.set_quota_us(quota);
  r.set_restore_quota_us(-1);
  r.set_lease_seconds(lease);
  r.set_owner("test");
  r.set_reason("cpu-usage above its watermark");
  return r;
}

adm::ClearCpuThrottleRequest Clear(const std::string& uid) {
  adm::ClearCpuThrottleRequest r;
  r.set_pod_uid(uid);
  r.set_container("c0");
  return r;
}

// A host with one admitted container p1/c0 placed on CPUs 0-3 by a reconciling plugin.
struct ThrottleFixture {
  HostFixture f;
  Host* host = nullptr;

  ThrottleFixture() { Start(); }
  void Start() {
    host = &f.StartHost();
    f.StartPlugin("test.qrm.io/pool",
                  {"--need-reconcile", "--oci-property", "CpusetCpus", "--result", "0-3"});
    REQUIRE(f.WaitRegistered("test.qrm.io/pool"));
    if (!host->state().GetContainer("p1", "c0")) {
      REQUIRE(host->admission().Admit(Request("p1", "c0", {{"test.qrm.io/pool", 1}})).ok());
    }
    f.view().Set({"p1"});
  }
  void Restart() {
    f.StopHost();
    f.StopPlugin("test.qrm.io/pool");
    Start();
  }
  std::vector<RecordingApplier::Call> Pushes() { return f.applier().calls(); }
};

TEST_CASE("a throttle reaches the runtime at once with the plugin's cpuset", "[throttle]") {
  ThrottleFixture t;
  auto set = admin::SetCpuThrottle(*t.host, Throttle("p1", 30000));
  REQUIRE(set.ok());
  CHECK(set->state() == "applied");
  CHECK(set->push_error().empty());
  const auto pushes = t.Pushes();
  REQUIRE(pushes.size() == 1);
  CHECK(pushes[0].update.resources.cpu_quota() == 30000);
  CHECK(pushes[0].update.resources.cpu_period() == 100000);
  CHECK(pushes[0].update.resources.cpuset_cpus() == "0-3");
  // A re-created container (CreateContainer of the same name) and the kubelet's own updates
  // get it too: both read the current update.
  auto readmitted = t.host->admission().Admit(Request("p1", "c0", {{"test.qrm.io/pool", 1}}));
  REQUIRE(readmitted.ok());
  CHECK(readmitted->update.resources.cpu_quota() == 30000);
  CHECK(readmitted->update.owned.contains(apply::OciProperty::kCpuQuota));
  // Renewing the lease with the same quota pushes nothing.
  t.f.applier().clear();
  auto renewed = admin::SetCpuThrottle(*t.host, Throttle("p1", 30000));
  REQUIRE(renewed.ok());
  CHECK(renewed->state() == "applied");
  CHECK(t.Pushes().empty());
  // A tick has nothing left to push.
  t.f.applier().clear();
  auto tick = t.host->reconciler().RunOnce();
  REQUIRE(tick.ok());
  CHECK(tick->throttles.pushed == 0);
  CHECK(t.Pushes().empty());
}

TEST_CASE("clearing a throttle writes back the restore quota and forgets it", "[throttle]") {
  ThrottleFixture t;
  REQUIRE(admin::SetCpuThrottle(*t.host, Throttle("p1", 30000)).ok());
  t.f.applier().clear();
  auto cleared = admin::ClearCpuThrottle(*t.host, Clear("p1"));
  REQUIRE(cleared.ok());
  CHECK(cleared->was_throttled());
  CHECK(cleared->state() == "restored");
  REQUIRE(t.Pushes().size() == 1);
  CHECK(t.Pushes()[0].update.resources.cpu_quota() == -1);
  CHECK(admin::ListCpuThrottles(*t.host).throttles().empty());
  auto again = t.host->admission().CurrentUpdate("p1", "c0");
  REQUIRE(again.ok());
  CHECK_FALSE(again->owned.contains(apply::OciProperty::kCpuQuota));
  auto none = admin::ClearCpuThrottle(*t.host, Clear("p1"));
  REQUIRE(none.ok());
  CHECK_FALSE(none->was_throttled());
}

TEST_CASE("a failed push stays pending until a tick gets it through", "[throttle]") {
  ThrottleFixture t;
  t.f.applier().set_fail(true);
  auto set = admin::SetCpuThrottle(*t.host, Throttle("p1", 30000));
  REQUIRE(set.ok());
  CHECK(set->state() == "pending");
  CHECK_THAT(set->push_error(), Catch::Contains("runtime down"));
  t.f.applier().set_fail(false);
  t.f.applier().clear();
  auto tick = t.host->reconciler().RunOnce();
  REQUIRE(tick.ok());
  CHECK(tick->throttles.pushed == 1);
  REQUIRE_FALSE(t.Pushes().empty());
  CHECK(t.Pushes()[0].update.resources.cpu_quota() == 30000);
  CHECK(admin::ListCpuThrottles(*t.host).throttles(0).state() == "applied");
}

// The class of bug: two writers of one container, each reading the current fields and then
// writing them. A reconcile write that read the old quota must not land after the throttle
// push that read the new one, or the runtime keeps the old quota while the host calls the new
// one applied (and never pushes it again).
TEST_CASE("a reconcile write of older values never lands after a newer throttle push",
          "[throttle]") {
  ThrottleFixture t;
  REQUIRE(admin::SetCpuThrottle(*t.host, Throttle("p1", 50000)).ok());
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  t.f.applier().set_before_next([&entered, released] {
    entered.set_value();
    released.wait();
  });
  t.f.applier().clear();
  // The tick re-applies p1/c0 (read: quota 50000) and is held inside its write.
  t.host->reconciler().QueueReapply(t.host->state().Snapshot());
  std::thread tick([&] { CHECK(t.host->reconciler().RunOnce().ok()); });
  entered.get_future().wait();
  std::thread guard([&] { CHECK(admin::SetCpuThrottle(*t.host, Throttle("p1", 30000)).ok()); });
  // Without one writer the guard's push lands now, and the tick's older write after it.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  release.set_value();
  tick.join();
  guard.join();
  const auto pushes = t.Pushes();
  REQUIRE_FALSE(pushes.empty());
  CHECK(pushes.back().update.resources.cpu_quota() == 30000);
  CHECK(pushes.back().update.resources.cpuset_cpus() == "0-3");
  CHECK(admin::ListCpuThrottles(*t.host).throttles(0).quota_us() == 30000);
}

TEST_CASE("throttles survive a host restart and are pushed once", "[throttle]") {
  ThrottleFixture t;
  REQUIRE(admin::SetCpuThrottle(*t.host, Throttle("p1", 30000)).ok());
  t.Restart();
  t.f.applier().clear();
  auto listed = admin::ListCpuThrottles(*t.host);
  REQUIRE(listed.throttles_size() == 1);
  CHECK(listed.throttles(0).quota_us() == 30000);
  CHECK(listed.throttles(0).state() == "pending");
  auto tick = t.host->reconciler().RunOnce();
  REQUIRE(tick.ok());
  CHECK(tick->throttles.pushed == 1);
  bool quota_pushed = false;
  for (const auto& call : t.Pushes()) {
    quota_pushed |= call.update.resources.cpu_quota() == 30000;
  }
  CHECK(quota_pushed);
}

TEST_CASE("an expired lease restores the container", "[throttle]") {
  ThrottleFixture t;
  REQUIRE(admin::SetCpuThrottle(*t.host, Throttle("p1", 30000, 1)).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  t.f.applier().clear();
  auto tick = t.host->reconciler().RunOnce();
  REQUIRE(tick.ok());
  CHECK(tick->throttles.expired == 1);
  REQUIRE_FALSE(t.Pushes().empty());
  CHECK(t.Pushes()[0].update.resources.cpu_quota() == -1);
  CHECK(admin::ListCpuThrottles(*t.host).throttles().empty());
}

TEST_CASE("a throttle needs an admitted container and a valid request", "[throttle]") {
  ThrottleFixture t;
  auto unknown = admin::SetCpuThrottle(*t.host, Throttle("nobody", 30000));
  CHECK(unknown.status().code() == StatusCode::kNotFound);
  CHECK_THAT(unknown.status().message(), Catch::Contains("pod=nobody container=c0"));
  auto bad = admin::SetCpuThrottle(*t.host, Throttle("p1", 10));
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(bad.status().message(), Catch::Contains("quota_us=10"));
  CHECK(t.Pushes().empty());
}

TEST_CASE("the throttles of a collected pod are forgotten", "[throttle]") {
  ThrottleFixture t;
  REQUIRE(admin::SetCpuThrottle(*t.host, Throttle("p1", 30000)).ok());
  t.f.view().Set({});
  REQUIRE(t.host->reconciler().RunOnce().ok());  // collects p1
  REQUIRE(t.host->state().GetPod("p1") == nullptr);
  auto tick = t.host->reconciler().RunOnce();
  REQUIRE(tick.ok());
  CHECK(tick->throttles.forgotten == 1);
  CHECK(admin::ListCpuThrottles(*t.host).throttles().empty());
}

// The pod's record is lost (a corrupt pod file is quarantined at start) while its container
// runs on at the throttled quota: the throttle is restored in the runtime before it is
// forgotten, or the container would stay throttled for good.
TEST_CASE("the throttle of a pod the host no longer holds is restored, then forgotten",
          "[throttle]") {
  ThrottleFixture t;
  REQUIRE(admin::SetCpuThrottle(*t.host, Throttle("p1", 30000)).ok());
  REQUIRE(t.host->state().RemovePod("p1").ok());
  t.f.applier().set_fail(true);  // the runtime does not answer: retried
  auto tick = t.host->reconciler().RunOnce();
  REQUIRE(tick.ok());
  CHECK(tick->throttles.forgotten == 0);
  REQUIRE(admin::ListCpuThrottles(*t.host).throttles_size() == 1);
  t.f.applier().set_fail(false);
  t.f.applier().clear();
  tick = t.host->reconciler().RunOnce();
  REQUIRE(tick.ok());
  CHECK(tick->throttles.forgotten == 1);
  CHECK(admin::ListCpuThrottles(*t.host).throttles().empty());
  bool restored = false;
  for (const RecordingApplier::Call& call : t.Pushes()) {
    if (call.uid != "p1" || call.container != "c0") continue;
    restored = call.update.resources.cpu_quota() == -1 &&
               call.update.owned.contains(apply::OciProperty::kCpuQuota) &&
               !call.update.owned.contains(apply::OciProperty::kCpusetCpus);
  }
  CHECK(restored);
}

}  // namespace
}  // namespace qrm::host::testing
