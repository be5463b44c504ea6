// The replay's scoring rules on hand-made steps: windows aligned with the steps, predictions
// made only from steps before each window, misses and their sizes, reclaimable share, the
// warm-up split, the oracle, and merging machines.
#include "advisor/replay/replay.h"

#include <catch2/catch.hpp>

namespace qrm::advisor {
namespace {

// One-minute steps of a 100-capacity machine at `usage`, with `spikes` (step index -> max).
std::vector<Observation> Steps(int count, double usage, std::map<int, double> spikes = {}) {
  std::vector<Observation> out;
  for (int i = 0; i < count; ++i) {
    Observation o;
    o.time = 60 * (i + 1);
    o.node = usage;
    o.node_max = spikes.count(i) ? spikes[i] : usage;
    o.capacity = 100;
    out.push_back(o);
  }
  return out;
}

ReplayOptions Options(int64_t warmup_s) {
  ReplayOptions o;
  o.models = {"borg-default"};  // predicts 100 / 1.1 whatever it sees: easy to score
  o.model_options = ModelOptions::ForResource(Resource::kCpu);
  o.warmup_s = warmup_s;
  return o;
}

TEST_CASE("a window is missed when its highest sample exceeds the prediction at its start",
          "[advisor][replay]") {
  // 20 steps = 4 windows; a spike to 95 in the third window (steps 10..14).
  auto result = ReplaySteps(Steps(20, 50, {{12, 95}}), Options(0));
  REQUIRE(result.ok());
  REQUIRE(result->models.size() == 2);
  const ModelResult& borg = result->models[0];
  CHECK(borg.model == "borg-default");
  // Window 0 is not scored (nothing observed before it); window 2 is missed.
  CHECK(borg.all.windows == 3);
  CHECK(borg.all.missed == 1);
  CHECK(borg.all.ViolationRate() == Approx(1.0 / 3));
  CHECK(borg.all.MissP99() == Approx((95 - 100 / 1.1) / 100));
  CHECK(borg.all.MeanReclaimable() == Approx(1 - 1 / 1.1));
  const ModelResult& oracle = result->models[1];
  CHECK(oracle.model == "oracle");
  CHECK(oracle.all.missed == 0);
  CHECK(oracle.all.MeanReclaimable() == Approx((0.5 * 2 + 0.05) / 3));
}

TEST_CASE("windows before the warm-up's end are scored only in the all-windows set",
          "[advisor][replay]") {
  auto result = ReplaySteps(Steps(20, 50, {{12, 95}}), Options(600));  // skips windows 0, 1
  REQUIRE(result.ok());
  const ModelResult& borg = result->models[0];
  CHECK(borg.after_warmup.windows == 2);
  CHECK(borg.after_warmup.missed == 1);
  CHECK(borg.after_warmup.MissP99() == Approx((95 - 100 / 1.1) / 100));
}

TEST_CASE("a prediction never sees the window it predicts", "[advisor][replay]") {
  // koordinator predicts from its histogram: a spike in the first step of a window must be
  // missed although the whole trace is flat otherwise.
  ReplayOptions o = Options(0);
  o.models = {"koordinator"};
  auto steps = Steps(60 * 5, 10);
  for (auto& s : steps) s.node_max = s.node;
  steps[100].node = steps[100].node_max = 90;  // step 100 opens window 20
  auto result = ReplaySteps(steps, o);
  REQUIRE(result.ok());
  CHECK(result->models[0].all.missed == 1);  // window 20
  CHECK(result->models[0].all.windows == 59);
}

TEST_CASE("machines merge by adding windows and misses", "[advisor][replay]") {
  auto a = ReplaySteps(Steps(20, 50, {{12, 95}}), Options(0));
  auto b = ReplaySteps(Steps(10, 20), Options(0));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  ReplayResult total;
  total.Merge(*a);
  total.Merge(*b);
  CHECK(total.machines == 2);
  CHECK(total.steps == 30);
  CHECK(total.models[0].all.windows == 3 + 1);
  CHECK(total.models[0].all.missed == 1);
}

TEST_CASE("windows that are not a multiple of the step are refused", "[advisor][replay]") {
  ReplayOptions o = Options(0);
  o.window_s = 90;
  CHECK(ReplaySteps(Steps(5, 1), o).status().message().find("window") != std::string::npos);
  o = Options(0);
  o.models = {"nope"};
  CHECK_FALSE(ReplaySteps(Steps(5, 1), o).ok());
}

}  // namespace
}  // namespace qrm::advisor
