// The advisor's clock against a scripted wall clock and steady clock: it follows the steady
// clock, catches up with a wall clock stepped forward, and keeps running (never back) when the
// wall clock is stepped back.
#include "advisor/agent/agent_clock.h"

#include <catch2/catch.hpp>

namespace qrm::advisor {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

TEST_CASE("the advisor's clock follows the steady clock and never goes back", "[advisor][clock]") {
  int64_t wall = 1'000'000, steady = 7 * kSecond;
  AgentClock clock([&] { return wall; }, [&] { return steady; });
  CHECK(clock.Now() == 1'000'000);
  wall += 3;
  steady += 3 * kSecond;
  CHECK(clock.Now() == 1'000'003);

  // Stepped back an hour: the advisor's time keeps running with the steady clock.
  wall -= 3600;
  steady += 2 * kSecond;
  CHECK(clock.Now() == 1'000'005);
  wall += 1;
  steady += kSecond;
  CHECK(clock.Now() == 1'000'006);

  // Stepped forward beyond the tolerance: it follows the wall clock.
  wall = 2'000'000;
  steady += kSecond;
  CHECK(clock.Now() == 2'000'000);
  steady += 2 * kSecond + kSecond / 2;
  wall += 2;
  CHECK(clock.Now() == 2'000'002);

  // Small differences (slew, rounding) are not steps.
  wall += 4;
  CHECK(clock.Now() == 2'000'002);
  steady += kSecond;
  CHECK(clock.Now() == 2'000'003);
}

}  // namespace
}  // namespace qrm::advisor
