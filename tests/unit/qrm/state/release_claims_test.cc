// ReleaseClaims (qrm/reconcile/release_claims.h): a runtime call's claim on a pod's release
// and the reconcile loop's release of it exclude each other.
#include "qrm/reconcile/release_claims.h"

#include <atomic>
#include <chrono>
#include <thread>

#include <catch2/catch.hpp>

namespace qrm::state {
namespace {

TEST_CASE("a claimed pod is not released by reconcile until every claim ends", "[claims]") {
  reconcile::ReleaseClaims claims;
  CHECK_FALSE(claims.Held("p"));
  {
    auto stop = claims.Hold("p");
    {
      auto remove = claims.Hold("p");  // a RemovePodSandbox while the stop is in flight
      CHECK(claims.Held("p"));
      CHECK_FALSE(claims.TryRelease("p").has_value());
    }
    CHECK(claims.Held("p"));
    CHECK_FALSE(claims.TryRelease("p").has_value());
    CHECK(claims.TryRelease("q").has_value());  // other pods are not affected
  }
  CHECK_FALSE(claims.Held("p"));
  CHECK(claims.TryRelease("p").has_value());
}

TEST_CASE("a claim waits for a reconcile release of the pod already running", "[claims]") {
  reconcile::ReleaseClaims claims;
  std::atomic<bool> claimed{false};
  std::thread shim;
  {
    auto release = claims.TryRelease("p");
    REQUIRE(release.has_value());
    CHECK_FALSE(claims.TryRelease("p").has_value());  // one release at a time
    shim = std::thread([&] {
      auto claim = claims.Hold("p");
      claimed = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK_FALSE(claimed);
  }
  shim.join();
  CHECK(claimed);
  CHECK_FALSE(claims.Held("p"));
}

}  // namespace
}  // namespace qrm::state
