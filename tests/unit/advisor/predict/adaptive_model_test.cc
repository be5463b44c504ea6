// The adaptive model: level plus the learned quantile of past rises, the online alpha, the
// time-of-day pools, and its cold start.
#include "advisor/predict/adaptive_model.h"

#include <catch2/catch.hpp>

namespace qrm::advisor {
namespace {

Observation Step(int64_t time, double usage, double highest) {
  Observation o;
  o.time = time;
  o.node = usage;
  o.node_max = highest;
  o.capacity = 128;  // residuals of 32 and 64 are 0.25 and 0.5 of it: exact in binary
  return o;
}

AdaptiveOptions Options() {
  AdaptiveOptions o;
  o.hour_spread = -1;  // one pool unless a test says otherwise
  o.min_residuals = 10;
  return o;
}

TEST_CASE("adaptive: the whole capacity until it has enough past horizons", "[advisor][adaptive]") {
  AdaptiveModel m(Options());
  for (int i = 1; i <= 5 * 5; ++i) m.Observe(Step(60 * i, 16, 16));  // 4 horizons closed
  CHECK(m.Predict(1500).peak == 128);
}

TEST_CASE("adaptive: a steady rise within each horizon becomes the margin", "[advisor][adaptive]") {
  AdaptiveModel m(Options());
  // Usage 16, and once in every 5-minute horizon a spike to 48: every residual is 0.25 of
  // capacity, so the prediction is the level (16) + 32.
  for (int i = 1; i <= 5 * 40; ++i) m.Observe(Step(60 * i, 16, i % 5 == 3 ? 48 : 16));
  CHECK(m.Predict(60 * 200).peak == Approx(48));
  // Nothing is missed once the margin is learnt: alpha is back at the budget, never above.
  CHECK(m.alpha() == Approx(0.03));
}

// Horizons of the model start at the first step (60) and every 300 s after; each gets one
// spike at its second step when `spiky(horizon)`. Returns the horizons whose spike was missed.
template <typename Spiky>
int MissedSpikes(AdaptiveModel& m, int horizons, Spiky spiky) {
  int missed = 0;
  m.Observe(Step(60, 16, 16));
  for (int h = 0; h < horizons; ++h) {
    const int64_t start = 60 + 300 * static_cast<int64_t>(h);
    const double predicted = m.Predict(start).peak;
    for (int s = 1; s <= 5; ++s) {
      const bool spike = spiky(h) && s == 2;
      m.Observe(Step(start + 60 * s, 16, spike ? 48 : 16));
      if (spike && 48 > predicted) ++missed;
    }
  }
  return missed;
}

TEST_CASE("adaptive: misses lower alpha, so a new regime is covered sooner",
          "[advisor][adaptive]") {
  // 200 flat horizons, then a spike in every horizon. The quantile alone covers the spikes
  // once they are 3 % of the remembered horizons; with alpha following the misses, sooner.
  auto spiky = [](int h) { return h >= 200; };
  AdaptiveOptions fixed = Options();
  fixed.step_size = 0;
  AdaptiveModel without(fixed);
  const int missed_without = MissedSpikes(without, 260, spiky);
  AdaptiveOptions learning = Options();
  learning.step_size = 0.01;
  AdaptiveModel with(learning);
  const int missed_with = MissedSpikes(with, 260, spiky);
  CHECK(missed_without >= 6);
  CHECK(missed_with < missed_without);
  CHECK(with.Predict(60 + 300 * 260).peak == Approx(48));
}

TEST_CASE("adaptive: horizons at the same time of day set the margin", "[advisor][adaptive]") {
  AdaptiveOptions o = Options();
  o.hour_spread = 1;
  o.step_size = 0;  // alpha stays at the budget
  // About 24 horizons within +-1 h a day: the time-of-day pool is used when it expects 5
  // residuals above its quantile, so the budget must be >= 5 / 24.
  o.violation_budget = 0.25;
  o.min_residuals = 5;
  AdaptiveModel m(o);
  // One day: horizons starting 10:00-10:59 rise by 64 (to 80), all others by 32 (to 48).
  for (int64_t t = 60; t <= 24 * 3600; t += 60) {
    const bool ten = (t / 3600) == 10;
    m.Observe(Step(t, 16, (t / 60) % 5 == 3 ? (ten ? 80 : 48) : 16));
  }
  const int64_t day = 24 * 3600;
  // 10:30: the pool is 09:30-11:30, half of it the 10 o'clock horizons.
  CHECK(m.Predict(day + 10 * 3600 + 30 * 60).peak == Approx(80));
  // 12:05: 10:05-10:59 are 66 to 120 minutes away, outside +-1 h (whole hours apart would
  // have let them in).
  CHECK(m.Predict(day + 12 * 3600 + 5 * 60).peak == Approx(48));
  CHECK(m.Predict(day + 16 * 3600).peak == Approx(48));
}

TEST_CASE("adaptive options out of range are refused naming the field", "[advisor][adaptive]") {
  AdaptiveOptions o;
  o.violation_budget = 0.7;
  CHECK(o.Validate().message().find("violation_budget") != std::string::npos);
  o = AdaptiveOptions{};
  o.horizon_s = 10;
  CHECK_FALSE(o.Validate().ok());
  CHECK(AdaptiveOptions{}.Validate().ok());
}

}  // namespace
}  // namespace qrm::advisor
