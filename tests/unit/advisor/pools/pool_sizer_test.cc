#include "advisor/pools/pool_sizer.h"

#include <catch2/catch.hpp>

namespace qrm::advisor {
namespace {

PoolSizerOptions Katalyst() {
  return PoolSizerOptions{};
}

PoolDecision Step(PoolSizer& s, int free_cpus, double need, int64_t now) {
  return s.Decide(PoolInputs{free_cpus, need, now});
}

TEST_CASE("the shared pool grows at once by at most max_grow CPUs") {
  PoolSizer s(Katalyst());
  s.SetCurrent(4);
  const PoolDecision d = Step(s, 40, 25.2, 100);  // wants 26: +10 per decision
  CHECK(d.reason == "grow");
  CHECK(d.target == 26);
  CHECK(d.shared == 14);
  CHECK(d.reclaimed == 26);
  CHECK(d.changed);
  CHECK(Step(s, 40, 25.2, 101).shared == 24);  // no wait between growth steps
  CHECK(Step(s, 40, 25.2, 102).shared == 26);
  CHECK(Step(s, 40, 25.2, 103).reason == "steady");
}

TEST_CASE("the shared pool shrinks by at most max_shrink CPUs, 30 s after the last change") {
  PoolSizer s(Katalyst());
  s.SetCurrent(20);
  PoolDecision d = Step(s, 40, 5, 1000);
  CHECK(d.reason == "shrink");  // nothing changed yet: the first shrink needs no wait
  CHECK(d.shared == 18);
  d = Step(s, 40, 5, 1029);
  CHECK(d.reason == "hold");
  CHECK(d.shared == 18);
  CHECK_FALSE(d.changed);
  d = Step(s, 40, 5, 1030);
  CHECK(d.reason == "shrink");
  CHECK(d.shared == 16);
  // A growth restarts the wait: the pool does not drop right after it grew.
  CHECK(Step(s, 40, 17.5, 1031).shared == 18);
  CHECK(Step(s, 40, 5, 1060).reason == "hold");
  CHECK(Step(s, 40, 5, 1061).shared == 16);
}

TEST_CASE("the minimums bound the target; the reclaimed minimum is kept first") {
  PoolSizer s(Katalyst());
  CHECK(s.SharedRange(40).lowest == 4);
  CHECK(s.SharedRange(40).highest == 36);
  // 6 free CPUs: reclaimed keeps 4, shared gets 2 although its minimum is 4.
  CHECK(s.SharedRange(6).lowest == 2);
  CHECK(s.SharedRange(6).highest == 2);
  // 2 free CPUs: the shared pool never goes empty (the plugin's rule).
  CHECK(s.SharedRange(2).lowest == 1);
  CHECK(s.SharedRange(2).highest == 1);
  s.SetCurrent(10);
  const PoolDecision d = Step(s, 40, 0, 0);
  CHECK(d.target == 4);
  CHECK(d.shared == 8);
  PoolSizer t(Katalyst());
  t.SetCurrent(30);
  CHECK(Step(t, 40, 39, 0).target == 36);  // the need beyond the range asks for its top
}

TEST_CASE("a size that no longer fits the free CPUs is clamped at once") {
  PoolSizer s(Katalyst());
  s.SetCurrent(30);
  const PoolDecision d = Step(s, 20, 30, 5);  // dedicated admissions took 20 CPUs
  CHECK(d.reason == "clamp");
  CHECK(d.shared == 16);
  CHECK(d.reclaimed == 4);
}

TEST_CASE("an unknown current size starts from every free CPU but the reclaimed minimum") {
  PoolSizer s(Katalyst());
  const PoolDecision d = Step(s, 40, 3, 0);
  CHECK(d.reason == "initial");
  CHECK(d.shared == 36);
  CHECK(d.changed);
  CHECK(Step(s, 40, 3, 1).reason == "hold");
}

TEST_CASE("no minimum on a 2-CPU node lets the shared pool take both CPUs") {
  PoolSizerOptions o;
  o.min_reclaimed_cpus = 0;
  o.min_shared_cpus = 1;
  o.shrink_interval_s = 3;
  PoolSizer s(o);
  s.SetCurrent(1);
  CHECK(Step(s, 2, 1.3, 0).shared == 2);
  CHECK(Step(s, 2, 0.1, 2).reason == "hold");
  const PoolDecision d = Step(s, 2, 0.1, 3);
  CHECK(d.shared == 1);
  CHECK(d.reclaimed == 1);
}

TEST_CASE("a need that is not a number is treated as the whole node") {
  PoolSizer s(Katalyst());
  s.SetCurrent(4);
  CHECK(Step(s, 40, std::numeric_limits<double>::quiet_NaN(), 0).target == 36);
  CHECK(Step(s, 40, -3, 100).target == 4);
}

TEST_CASE("pool sizer options are validated naming the field") {
  PoolSizerOptions o;
  o.max_shrink = 0;
  CHECK(o.Validate().message().find("max_shrink 0") != std::string::npos);
  o = PoolSizerOptions{};
  o.min_reclaimed_cpus = -1;
  CHECK(o.Validate().message().find("min_reclaimed_cpus -1") != std::string::npos);
  CHECK(PoolSizerOptions{}.Validate().ok());
}

}  // namespace
}  // namespace qrm::advisor
