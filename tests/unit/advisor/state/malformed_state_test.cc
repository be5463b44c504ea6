// Malformed states: every bad field is kDataLoss naming the field and the value found, and the
// model keeps the state it had (nothing half-restored), max: models included.
#include <rapidjson/pointer.h>

#include "tests/unit/advisor/state/state_test_util.h"

namespace qrm::advisor {
namespace {

using test::BusyStep;
using test::FastOptions;
using test::Make;
using test::Parse;
using test::Save;
using test::StateText;

constexpr const char* kMax = "max:koordinator+adaptive+nsigma-v2";

struct Mutation {
  std::string spec;
  std::string pointer;  // JSON pointer into the state; value "-" removes the member
  std::string value;    // JSON text
  std::string message;  // a part of the error
};

const std::vector<Mutation>& Mutations() {
  static const std::vector<Mutation> m = {
      {"koordinator", "/capacity", R"("zz")",
       R"(koordinator.capacity: invalid value "zz" (expected 16 lowercase hex digits)"},
      {"koordinator", "/capacity", R"("bff0000000000000")",
       R"(koordinator.capacity: invalid value "bff0000000000000" (-1; expected a finite number >= 0))"},
      {"koordinator", "/system/total", "5", "koordinator.system.total: invalid value 5 (expected"},
      {"koordinator", "/system/buckets/0/0", "100000",
       "koordinator.system.buckets[0][0]: invalid value 100000 (expected an integer from 0 to "
       "157)"},
      {"koordinator", "/system/buckets/0/1", R"("0000000000000000")",
       "koordinator.system.buckets[0][1]: invalid value \"0000000000000000\" (expected a weight > "
       "0"},
      {"koordinator", "/system/buckets/1/0", "0",
       "koordinator.system.buckets[1][0]: invalid value 0 (expected a bucket index above"},
      {"koordinator", "/pods/p1/last_seen", R"("x")",
       R"(koordinator.pods["p1"].last_seen: invalid value "x" (expected a time)"},
      {"koordinator", "/pods/p1/started", "1125899906842624",
       R"(koordinator.pods["p1"].started: invalid value 1125899906842624)"},
      {"koordinator", "/pods/p1", "[]",
       R"(koordinator.pods["p1"]: invalid value [] (expected a JSON object))"},
      {"koordinator", "/last_step", "-", "koordinator.last_step: missing"},
      {"koordinator", "/extra", "1", "koordinator: unexpected member \"extra\""},
      {"koordinator", "/model", R"("adaptive")", R"(koordinator.model: invalid value "adaptive")"},
      {"koordinator", "/options/histogram/ratio", "1",
       "koordinator.options.histogram.ratio: invalid value 1"},
      {"resource-central", "/pods/p1/histogram/reference", R"("a")",
       R"(resource-central.pods["p1"].histogram.reference: invalid value "a")"},
      {"resource-central", "/system/buckets", "{}",
       "resource-central.system.buckets: invalid value {}"},
      {"nsigma-v2", "/node/weight", R"("fff0000000000000")",
       R"(nsigma-v2.node.weight: invalid value "fff0000000000000" (-inf; expected a finite number >= 0))"},
      {"nsigma-v2", "/system/sum", "-", "nsigma-v2.system.sum: missing"},
      {"adaptive", "/alpha", R"("3fb999999999999a")",
       R"(adaptive.alpha: invalid value "3fb999999999999a" (expected at most the violation budget, 0.03))"},
      {"adaptive", "/residuals/1/0", "0",
       "adaptive.residuals[1][0]: invalid value 0 (expected a time not before"},
      {"adaptive", "/recent/0", "[1]",
       "adaptive.recent[0]: invalid value [1] (expected an array of two)"},
      {"adaptive", "/open/level", "true", "adaptive.open.level: invalid value true"},
      {"borg-default", "/observed", "1",
       "borg-default.observed: invalid value 1 (expected true or false)"},
      {kMax, "/members/0", "-", "members: invalid value [{"},
      {kMax, "/members/2/capacity", R"("7ff8000000000000")",
       "members[2]: nsigma-v2.capacity: invalid value \"7ff8000000000000\" (nan; expected"},
  };
  return m;
}

void Apply(rapidjson::Document& state, const Mutation& m) {
  const rapidjson::Pointer pointer(m.pointer.c_str());
  REQUIRE(pointer.IsValid());
  if (m.value == "-") {
    REQUIRE(pointer.Erase(state));
    return;
  }
  rapidjson::Document value(&state.GetAllocator());
  value.Parse(m.value.c_str());
  REQUIRE_FALSE(value.HasParseError());
  pointer.Set(state, value);
}

// A model that has learned something else than the state it is handed.
std::unique_ptr<PeakModel> Learned(const std::string& spec) {
  auto m = Make(spec, FastOptions());
  for (int i = 1; i <= 40; ++i) m->Observe(BusyStep(i, 1'600'000'000));
  return m;
}

TEST_CASE("a malformed field is kDataLoss naming it and its value, the model unchanged",
          "[advisor][state]") {
  for (const Mutation& m : Mutations()) {
    INFO(m.spec << " " << m.pointer << " = " << m.value);
    auto source = Make(m.spec, FastOptions());
    for (int i = 1; i <= 200; ++i) source->Observe(BusyStep(i));
    rapidjson::Document state = Save(*source);
    Apply(state, m);
    auto target = Learned(m.spec);
    const std::string before = StateText(*target);
    const Status s = target->RestoreState(state);
    INFO(s.ToString());
    CHECK(s.code() == StatusCode::kDataLoss);
    CHECK(s.message().find(m.message) != std::string::npos);
    CHECK(StateText(*target) == before);
  }
}

TEST_CASE("a state that is not an object, or lists a pod twice, is kDataLoss", "[advisor][state]") {
  auto target = Learned("koordinator");
  CHECK(target->RestoreState(Parse("[]")).message() ==
        "koordinator: invalid value [] (expected a JSON object)");
  auto source = Make("koordinator", FastOptions());
  for (int i = 1; i <= 200; ++i) source->Observe(BusyStep(i));
  rapidjson::Document state = Save(*source);
  rapidjson::Value copy(state["pods"]["p1"], state.GetAllocator());
  state["pods"].AddMember("p1", copy, state.GetAllocator());
  const Status s = target->RestoreState(state);
  CHECK(s.code() == StatusCode::kDataLoss);
  CHECK(s.message() == R"(koordinator.pods["p1"]: the pod appears twice)");
}

}  // namespace
}  // namespace qrm::advisor
