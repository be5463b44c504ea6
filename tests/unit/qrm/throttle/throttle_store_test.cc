#include "qrm/throttle/throttle_store.h"

#include <atomic>
#include <thread>

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include "testing/temp_dir.h"

namespace qrm::throttle {
namespace {

using qrm::testing::TempDir;

struct Fixture {
  TempDir dir;
  int64_t now = 1000;
  std::string path = dir.File("cpu-throttles.json");
  ThrottleStore store{path, [this] { return now; }};

  static CpuThrottleRequest Request(int64_t quota, int64_t lease = 60) {
    CpuThrottleRequest r;
    r.pod_uid = "uid-1";
    r.container = "app";
    r.quota_us = quota;
    r.restore_quota_us = 200000;
    r.lease_s = lease;
    r.owner = "test";
    r.reason = "cpu-usage above 1.6";
    return r;
  }
};

TEST_CASE("a throttle is stored pending and enters every update of its container", "[throttle]") {
  Fixture f;
  auto set = f.store.Set(Fixture::Request(50000));
  REQUIRE(set.ok());
  CHECK(set->since_unix == 1000);
  CHECK(set->expires_unix == 1060);
  CHECK(f.store.Pending() == std::vector<ThrottleStore::Key>{{"uid-1", "app"}});
  apply::ContainerUpdate update;
  update.resources.set_cpuset_cpus("0-3");
  update.owned.insert(apply::OciProperty::kCpusetCpus);
  f.store.Overlay("uid-1", "app", &update);
  CHECK(update.resources.cpu_quota() == 50000);
  CHECK(update.resources.cpu_period() == 100000);
  CHECK(update.owned.contains(apply::OciProperty::kCpuQuota));
  CHECK(update.owned.contains(apply::OciProperty::kCpuPeriod));
  CHECK(update.resources.cpuset_cpus() == "0-3");
  apply::ContainerUpdate other;
  f.store.Overlay("uid-1", "sidecar", &other);
  CHECK(other.owned.empty());
}

TEST_CASE("a push is taken only for the values it carried", "[throttle]") {
  Fixture f;
  REQUIRE(f.store.Set(Fixture::Request(50000)).ok());
  // A push read 40000 before the newest Set: the runtime does not hold 50000.
  REQUIRE(f.store.Applied({"uid-1", "app"}, 40000, 100000).ok());
  CHECK(f.store.IsPending({"uid-1", "app"}));
  REQUIRE(f.store.Applied({"uid-1", "app"}, 50000, 100000).ok());
  CHECK_FALSE(f.store.IsPending({"uid-1", "app"}));
  // Renewing the lease with the same quota changes nothing in the runtime.
  f.now = 1030;
  auto renewed = f.store.Set(Fixture::Request(50000));
  REQUIRE(renewed.ok());
  CHECK(renewed->expires_unix == 1090);
  CHECK(renewed->since_unix == 1000);
  CHECK_FALSE(f.store.IsPending({"uid-1", "app"}));
  // A lower quota does.
  REQUIRE(f.store.Set(Fixture::Request(30000)).ok());
  CHECK(f.store.IsPending({"uid-1", "app"}));
}

TEST_CASE("the first restore values are kept across later calls", "[throttle]") {
  Fixture f;
  REQUIRE(f.store.Set(Fixture::Request(50000)).ok());
  auto later = Fixture::Request(30000);
  later.restore_quota_us = 50000;  // what the caller reads from the throttled runtime
  REQUIRE(f.store.Set(later).ok());
  CHECK(f.store.Get("uid-1", "app")->restore_quota_us == 200000);
  // The kubelet resizing the container in place is what a restore gives back.
  REQUIRE(f.store.NoteKubeletLimit("uid-1", "app", 300000, 100000).ok());
  CHECK(f.store.Get("uid-1", "app")->restore_quota_us == 300000);
  // A resize below the throttle: the container is held at its new limit, not above it.
  REQUIRE(f.store.NoteKubeletLimit("uid-1", "app", 20000, 100000).ok());
  CHECK(f.store.Get("uid-1", "app")->EffectiveQuota() == 20000);
  apply::ContainerUpdate update;
  f.store.Overlay("uid-1", "app", &update);
  CHECK(update.resources.cpu_quota() == 20000);
  // An update of the cpuset alone (quota 0: unchanged in the CRI) leaves the limit alone.
  REQUIRE(f.store.NoteKubeletLimit("uid-1", "app", 0, 0).ok());
  CHECK(f.store.Get("uid-1", "app")->restore_quota_us == 20000);
  REQUIRE(f.store.NoteKubeletLimit("uid-1", "app", -1, 100000).ok());
  CHECK(f.store.Get("uid-1", "app")->restore_quota_us == -1);
}

TEST_CASE("clearing restores the old quota and forgets the entry once pushed", "[throttle]") {
  Fixture f;
  REQUIRE(f.store.Set(Fixture::Request(50000)).ok());
  REQUIRE(f.store.Applied({"uid-1", "app"}, 50000, 100000).ok());
  auto cleared = f.store.Clear("uid-1", "app");
  REQUIRE(cleared.ok());
  CHECK(*cleared);
  CHECK(f.store.IsPending({"uid-1", "app"}));
  apply::ContainerUpdate update;
  f.store.Overlay("uid-1", "app", &update);
  CHECK(update.resources.cpu_quota() == 200000);
  REQUIRE(f.store.Applied({"uid-1", "app"}, 200000, 100000).ok());
  CHECK_FALSE(f.store.Get("uid-1", "app").has_value());
  auto none = f.store.Clear("uid-1", "app");
  REQUIRE(none.ok());
  CHECK_FALSE(*none);
}

TEST_CASE("an expired lease starts restoring and a new set throttles again", "[throttle]") {
  Fixture f;
  REQUIRE(f.store.Set(Fixture::Request(50000, 10)).ok());
  f.now = 1009;
  REQUIRE(f.store.ExpireLeases()->empty());
  f.now = 1010;
  auto expired = f.store.ExpireLeases();
  REQUIRE(expired.ok());
  CHECK(*expired == std::vector<ThrottleStore::Key>{{"uid-1", "app"}});
  CHECK(f.store.Get("uid-1", "app")->restoring);
  REQUIRE(f.store.Set(Fixture::Request(40000)).ok());
  CHECK_FALSE(f.store.Get("uid-1", "app")->restoring);
  CHECK(f.store.Get("uid-1", "app")->restore_quota_us == 200000);
}

TEST_CASE("throttles survive a restart and are all pending again", "[throttle]") {
  Fixture f;
  REQUIRE(f.store.Set(Fixture::Request(50000)).ok());
  REQUIRE(f.store.Applied({"uid-1", "app"}, 50000, 100000).ok());
  auto second = Fixture::Request(20000);
  second.pod_uid = "uid-2";
  REQUIRE(f.store.Set(second).ok());
  REQUIRE(f.store.Clear("uid-2", "app").ok());

  ThrottleStore reloaded(f.path, [&] { return f.now; });
  REQUIRE(reloaded.Load().ok());
  CHECK(reloaded.List() == f.store.List());
  CHECK(reloaded.Pending().size() == 2);
  CHECK(reloaded.Get("uid-2", "app")->restoring);
}

TEST_CASE("a failed write changes nothing", "[throttle]") {
  Fixture f;
  REQUIRE(f.store.Set(Fixture::Request(50000)).ok());
  REQUIRE(::chmod(f.dir.path().c_str(), 0500) == 0);
  auto refused = f.store.Set(Fixture::Request(20000));
  REQUIRE(::chmod(f.dir.path().c_str(), 0700) == 0);
  if (::geteuid() == 0) return;  // root writes anyway: nothing failed to check
  REQUIRE_FALSE(refused.ok());
  CHECK(f.store.Get("uid-1", "app")->quota_us == 50000);
}

TEST_CASE("a bad request names the field and the value", "[throttle]") {
  Fixture f;
  auto check = [&](CpuThrottleRequest r, const std::string& expected) {
    auto s = f.store.Set(r);
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(s.status().message(), Catch::Contains(expected));
  };
  auto r = Fixture::Request(999);
  check(r, "quota_us=999");
  r = Fixture::Request(50000);
  r.period_us = 2000000;
  check(r, "period_us=2000000");
  r = Fixture::Request(50000);
  r.restore_quota_us = 0;
  check(r, "restore_quota_us (or -1 for no limit)=0");
  r = Fixture::Request(50000, 0);
  check(r, "lease_seconds=0");
  r = Fixture::Request(50000);
  r.reason = "two\nlines";
  check(r, "reason=");
  r = Fixture::Request(50000);
  r.container.clear();
  check(r, "container");
  CHECK(f.store.List().empty());
}

TEST_CASE("a corrupt throttle file is moved aside and reported", "[throttle]") {
  Fixture f;
  qrm::testing::WriteFile(f.path, "{\"version\":1,");
  const Status s = f.store.Load();
  CHECK(s.code() == StatusCode::kDataLoss);
  CHECK(f.store.List().empty());
  struct stat st {};
  CHECK(::stat(f.path.c_str(), &st) != 0);
}

// Readers (Overlay on every admission) run beside changes and their durable writes: each sees
// one whole state, never a half-made one, and the last change is what the file holds.
TEST_CASE("readers run beside changes and always see a whole state", "[throttle]") {
  Fixture f;
  REQUIRE(f.store.Set(Fixture::Request(10000)).ok());
  std::atomic<bool> done{false};
  std::atomic<int> reads{0}, torn{0};
  std::thread reader([&] {
    while (!done.load()) {
      apply::ContainerUpdate update;
      f.store.Overlay("uid-1", "app", &update);
      const int64_t quota = update.resources.cpu_quota();
      const std::optional<CpuThrottle> t = f.store.Get("uid-1", "app");
      if ((quota != 10000 && quota != 20000) || !t || t->restore_quota_us != 200000) ++torn;
      ++reads;
    }
  });
  for (int i = 0; i < 60; ++i) {
    REQUIRE(f.store.Set(Fixture::Request(i % 2 == 0 ? 20000 : 10000)).ok());
  }
  done = true;
  reader.join();
  CHECK(reads.load() > 0);
  CHECK(torn.load() == 0);
  ThrottleStore reloaded{f.path, [&f] { return f.now; }};
  REQUIRE(reloaded.Load().ok());
  REQUIRE(reloaded.Get("uid-1", "app").has_value());
  CHECK(reloaded.Get("uid-1", "app")->quota_us == 10000);  // the 60th change
  CHECK(f.store.IsPending({"uid-1", "app"}));
}

}  // namespace
}  // namespace qrm::throttle
