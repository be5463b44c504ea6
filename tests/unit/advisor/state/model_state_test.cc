// Every model's state: a restored model predicts exactly what the original would, now and
// after the same further steps; states of other options are refused naming the option and
// both values; malformed fields are kDataLoss naming the field and the value, and leave the
// model as it was; RetainPods forgets unknown pods; doubles are encoded exactly.
#include "advisor/predict/model_state.h"

#include <cfloat>
#include <cmath>
#include <limits>

#include "tests/unit/advisor/state/state_test_util.h"

namespace qrm::advisor {
namespace {

using test::AllSpecs;
using test::BusyStep;
using test::FastOptions;
using test::Make;
using test::Parse;
using test::RequireSamePrediction;
using test::StateText;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Feeds steps [1, split] to a model, restores its state (through its JSON text) into a fresh
// one, then feeds both steps (split, total] and requires the same prediction after every step.
void CheckRoundTrip(const std::string& spec, const ModelOptions& o, int split, int total) {
  INFO(spec << " split at step " << split);
  auto a = Make(spec, o);
  for (int i = 1; i <= split; ++i) a->Observe(BusyStep(i));
  const std::string text = StateText(*a);
  auto b = Make(spec, o);
  const Status restored = b->RestoreState(Parse(text));
  INFO(restored.ToString());
  REQUIRE(restored.ok());
  REQUIRE(StateText(*b) == text);
  const int64_t now = BusyStep(split).time;
  RequireSamePrediction(a->Predict(now), b->Predict(now));
  RequireSamePrediction(a->Predict(now + 24 * 3600), b->Predict(now + 24 * 3600));
  for (int i = split + 1; i <= total; ++i) {
    a->Observe(BusyStep(i));
    b->Observe(BusyStep(i));
    RequireSamePrediction(a->Predict(BusyStep(i).time), b->Predict(BusyStep(i).time));
  }
  REQUIRE(StateText(*a) == StateText(*b));
}

TEST_CASE("a restored model predicts exactly what the original would", "[advisor][state]") {
  for (const std::string& spec : AllSpecs()) {
    CheckRoundTrip(spec, ModelOptions::ForResource(Resource::kCpu), 300, 600);
    CheckRoundTrip(spec, FastOptions(), 300, 600);
    CheckRoundTrip(spec, FastOptions(), 3, 100);  // cold: no horizon closed, no pod warm
  }
}

TEST_CASE("a model that has observed nothing round-trips to a model without a prediction",
          "[advisor][state]") {
  for (const std::string& spec : AllSpecs()) {
    INFO(spec);
    auto a = Make(spec, FastOptions());
    auto b = Make(spec, FastOptions());
    REQUIRE(b->RestoreState(Parse(StateText(*a))).ok());
    CHECK_FALSE(b->Predict(0).known);
    CheckRoundTrip(spec, FastOptions(), 0, 50);
  }
}

TEST_CASE("a state learned under other options is refused, naming the option and both values",
          "[advisor][state]") {
  struct Case {
    std::string spec;
    void (*change)(ModelOptions&);
    std::string option, saved, now;
  };
  const std::vector<Case> cases = {
      {"koordinator", [](ModelOptions& o) { o.koordinator.histogram.half_life_s = 86400; },
       "koordinator.options.histogram.half_life_s", "43200", "86400"},
      {"resource-central", [](ModelOptions& o) { o.resource_central.histogram.ratio = 1.1; },
       "resource-central.options.histogram.ratio", "1.05", "1.1"},
      {"nsigma-v2", [](ModelOptions& o) { o.nsigma.half_life_s = 3600; },
       "nsigma-v2.options.half_life_s", "43200", "3600"},
      {"adaptive", [](ModelOptions& o) { o.adaptive.violation_budget = 0.01; },
       "adaptive.options.violation_budget", "0.03", "0.01"},
      {"adaptive", [](ModelOptions& o) { o.adaptive.horizon_s = 600; },
       "adaptive.options.horizon_s", "300", "600"},
  };
  for (const Case& c : cases) {
    INFO(c.option);
    const ModelOptions before = ModelOptions::ForResource(Resource::kCpu);
    auto a = Make(c.spec, before);
    for (int i = 1; i <= 50; ++i) a->Observe(BusyStep(i));
    ModelOptions after = before;
    c.change(after);
    auto b = Make(c.spec, after);
    b->Observe(BusyStep(1));
    const std::string untouched = StateText(*b);
    const Status s = b->RestoreState(Parse(StateText(*a)));
    CHECK(s.code() == StatusCode::kFailedPrecondition);
    CHECK(Contains(s.message(), c.option + ": the checkpoint has " + c.saved + ", this model " +
                                    c.now + " (the configuration changed)"));
    CHECK(StateText(*b) == untouched);
  }
}

TEST_CASE("the borg-default state ignores the overcommit, which does not shape it",
          "[advisor][state]") {
  ModelOptions o = ModelOptions::ForResource(Resource::kCpu);
  auto a = Make("borg-default", o);
  a->Observe(BusyStep(10));
  o.borg_overcommit = 2;
  auto b = Make("borg-default", o);
  REQUIRE(b->RestoreState(Parse(StateText(*a))).ok());
  CHECK(b->Predict(0).peak == Approx(a->Predict(0).peak * 1.1 / 2));
}

TEST_CASE("RetainPods forgets the pods whose uid is not in the set", "[advisor][state]") {
  for (const std::string spec :
       {"koordinator", "resource-central", "nsigma-v2", "max:koordinator+nsigma-v2"}) {
    INFO(spec);
    auto m = Make(spec, FastOptions());
    for (int i = 1; i <= 150; ++i) m->Observe(BusyStep(i));  // p0, p1, p2, p3 on the node
    REQUIRE(m->Predict(0).pods.size() == 4);
    m->RetainPods({"p1", "p3", "gone"});
    const Prediction p = m->Predict(0);
    CHECK(p.pods.size() == 2);
    CHECK(p.pods.count("p1") == 1);
    CHECK(p.pods.count("p3") == 1);
    CHECK_FALSE(Contains(StateText(*m), "\"p0\""));
    CHECK_FALSE(Contains(StateText(*m), "\"p2\""));
  }
  auto adaptive = Make("adaptive", FastOptions());  // no pods: keeps everything
  adaptive->Observe(BusyStep(1));
  const std::string before = StateText(*adaptive);
  adaptive->RetainPods({});
  CHECK(StateText(*adaptive) == before);
}

TEST_CASE("doubles are stored as their bit patterns, exactly", "[advisor][state]") {
  const std::vector<std::pair<double, std::string>> cases = {
      {0.0, "0000000000000000"},
      {-0.0, "8000000000000000"},
      {1.0, "3ff0000000000000"},
      {-2.5, "c004000000000000"},
      {0.1, "3fb999999999999a"},
      {std::numeric_limits<double>::denorm_min(), "0000000000000001"},
      {DBL_MIN - std::numeric_limits<double>::denorm_min(), "000fffffffffffff"},  // largest
                                                                                  // denormal
      {DBL_MIN, "0010000000000000"},
      {DBL_MAX, "7fefffffffffffff"},
      {1e300, "7e37e43c8800759c"},
      {std::numeric_limits<double>::infinity(), "7ff0000000000000"},
  };
  for (const auto& [value, text] : cases) {
    INFO(text);
    CHECK(EncodeDouble(value) == text);
    const StatusOr<double> back = DecodeDouble(text);
    REQUIRE(back.ok());
    CHECK(std::signbit(*back) == std::signbit(value));
    CHECK(*back == value);
  }
  CHECK(std::isnan(*DecodeDouble("7ff8000000000000")));
  for (const char* bad : {"3FF0000000000000", "3ff000000000000", "3ff00000000000000",
                          "0x3ff00000000000", "3ff000000000000g", "", " 3ff000000000000"}) {
    INFO(bad);
    CHECK(DecodeDouble(bad).status().code() == StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace qrm::advisor
