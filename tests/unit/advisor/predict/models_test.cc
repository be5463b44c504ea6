// Each statistical model against hand-computed traces, and the factory's names and errors.
#include <memory>

#include <catch2/catch.hpp>

#include "advisor/predict/model_factory.h"

namespace qrm::advisor {
namespace {

// The upper edge of `value`'s bucket in Koordinator's CPU histogram.
double Edge(double value) {
  DecayedHistogram h(KoordinatorOptions::For(Resource::kCpu).histogram);
  return h.BucketStart(h.BucketOf(value) + 1);
}

Observation Step(int64_t time, double node, std::vector<PodUsage> pods = {}) {
  Observation o;
  o.time = time;
  o.node = node;
  o.node_max = node;
  o.capacity = 100;
  o.pods = std::move(pods);
  return o;
}

PodUsage Pod(std::string uid, PriorityClass c, double request, double usage, int64_t started) {
  return PodUsage{std::move(uid), c, request, usage, usage, started};
}

TEST_CASE("no model has a prediction before its first step", "[advisor][models]") {
  const ModelOptions o = ModelOptions::ForResource(Resource::kCpu);
  for (const std::string& name : ModelNames()) {
    INFO(name);
    auto m = MakeModel(name, o);
    REQUIRE(m.ok());
    CHECK_FALSE((*m)->Predict(0).known);
    (*m)->Observe(Step(60, 10));
    CHECK((*m)->Predict(60).known);
  }
  auto max = MakeModel("max:koordinator+adaptive", o);
  REQUIRE(max.ok());
  CHECK_FALSE((*max)->Predict(0).known);
}

TEST_CASE("a pod that left the node stops counting at once, for every per-pod model",
          "[advisor][models]") {
  const ModelOptions o = ModelOptions::ForResource(Resource::kCpu);
  for (const char* name : {"koordinator", "resource-central", "nsigma-v2"}) {
    INFO(name);
    auto m = MakeModel(name, o);
    REQUIRE(m.ok());
    // "old" runs at 8 for an hour, then is replaced by "new" at 8 (a rolling update).
    int64_t t = 0;
    for (int i = 0; i < 60; ++i)
      (*m)->Observe(Step(t += 60, 8, {Pod("old", PriorityClass::kProd, 8, 8, 0)}));
    for (int i = 0; i < 5; ++i)
      (*m)->Observe(Step(t += 60, 8, {Pod("new", PriorityClass::kProd, 8, 8, 0)}));
    const Prediction p = (*m)->Predict(t);
    CHECK(p.pods.count("old") == 0);
    CHECK(p.pods.count("new") == 1);
    CHECK(p.peak < 8 * 1.1 * 1.5);  // not the two pods summed
  }
}

TEST_CASE("koordinator on a machine trace: 1.1 x p95 of the node", "[advisor][models]") {
  KoordinatorModel m(KoordinatorOptions::For(Resource::kCpu));
  // 95 of 100 samples at 10, the 5 oldest at 40 (older samples weigh a little less): the p95
  // is 10's bucket edge. System usage is the node's (no pods); the Prod class is 0.
  for (int i = 0; i < 100; ++i) m.Observe(Step(60 * (i + 1), i < 5 ? 40 : 10));
  CHECK(m.Predict(6000).peak == Approx(1.1 * Edge(10) + 1.1 * Edge(0)));
}

TEST_CASE(
    "koordinator: the larger of the pod and the priority predictors; cold pods count "
    "their request",
    "[advisor][models]") {
  KoordinatorOptions o = KoordinatorOptions::For(Resource::kCpu);
  KoordinatorModel m(o);
  const int64_t day = 24 * 3600;
  // An old Prod pod using 2 of 8, a batch pod using 20 (not protected), system 1.
  for (int64_t t = 60; t <= 2 * day; t += 60) {
    std::vector<PodUsage> pods = {Pod("old", PriorityClass::kProd, 8, 2, 0),
                                  Pod("batch", PriorityClass::kBatch, 0, 20, 0)};
    if (t > 2 * day - 3600) pods.push_back(Pod("new", PriorityClass::kProd, 30, 1, 2 * day - 3600));
    m.Observe(Step(t, 2 + 20 + 1 + (t > 2 * day - 3600 ? 1 : 0), pods));
  }
  const Prediction p = m.Predict(2 * day);
  const double pod_peak = 1.1 * Edge(2) + 30;  // "new" is an hour old: its request
  CHECK(p.peak == Approx(pod_peak));
  CHECK(p.pods.at("old") == Approx(1.1 * Edge(2)));
  // Without the cold pod the priority predictor (system + Prod class) is the larger.
  KoordinatorModel warm(o);
  for (int64_t t = 60; t <= day; t += 60) {
    warm.Observe(Step(t, 2 + 20 + 1,
                      {Pod("old", PriorityClass::kProd, 8, 2, 0),
                       Pod("batch", PriorityClass::kBatch, 0, 20, 0)}));
  }
  CHECK(warm.Predict(day).peak == Approx(1.1 * Edge(1) + 1.1 * Edge(2)));
}

TEST_CASE("nsigma v1 is mean + N stdev of the protected usage; v2 adds the pods' sum",
          "[advisor][models]") {
  NSigmaOptions o;
  o.n = 3;
  o.half_life_s = 1e12;  // no decay: plain mean and stdev
  NSigmaModel v1(o, false), v2(o, true);
  for (int i = 0; i < 100; ++i) {
    // Two Prod pods out of phase (0/2 and 2/0): the node is a flat 2 (stdev 0), each pod has
    // mean 1 and stdev 1. v1 sees only the node; v2 also the pods' sum of sigmas.
    const bool odd = i % 2 == 1;
    const auto step = Step(60 * (i + 1), 2,
                           {Pod("a", PriorityClass::kProd, 0, odd ? 2 : 0, 0),
                            Pod("b", PriorityClass::kProd, 0, odd ? 0 : 2, 0)});
    v1.Observe(step);
    v2.Observe(step);
  }
  CHECK(v1.Predict(6000).peak == Approx(2));
  CHECK(v2.Predict(6000).pods.at("a") == Approx(1 + 3 * 1));
  CHECK(v2.Predict(6000).peak == Approx(4 + 4 + 0));  // system is 0
  NSigmaModel alternating(o, false);
  for (int i = 0; i < 100; ++i) alternating.Observe(Step(60 * (i + 1), i % 2 == 1 ? 3 : 1));
  CHECK(alternating.Predict(6000).peak == Approx(2 + 3 * 1));  // mean 2, stdev 1
}

TEST_CASE("borg-default divides the Prod requests by 1.1; a podless trace requests all",
          "[advisor][models]") {
  BorgDefaultModel m(1.1);
  m.Observe(Step(60, 5,
                 {Pod("a", PriorityClass::kProd, 6, 1, 0), Pod("b", PriorityClass::kProd, 5, 1, 0),
                  Pod("c", PriorityClass::kBatch, 50, 1, 0)}));
  CHECK(m.Predict(60).peak == Approx(10));
  m.Observe(Step(120, 5));
  CHECK(m.Predict(120).peak == Approx(100 / 1.1));
}

TEST_CASE("resource-central sums the pods' percentiles and system's", "[advisor][models]") {
  ResourceCentralModel m(ModelOptions::ForResource(Resource::kCpu).resource_central);
  for (int i = 1; i <= 50; ++i) {
    m.Observe(
        Step(60 * i, 6,
             {Pod("a", PriorityClass::kProd, 0, 1, 0), Pod("b", PriorityClass::kProd, 0, 2, 0)}));
  }
  CHECK(m.Predict(3000).peak == Approx(Edge(1) + Edge(2) + Edge(3)));
}

TEST_CASE("max takes the larger peak of its models", "[advisor][models]") {
  auto m =
      MakeModel("max:borg-default+resource-central", ModelOptions::ForResource(Resource::kCpu));
  REQUIRE(m.ok());
  CHECK((*m)->name() == "max:borg-default+resource-central");
  for (int i = 1; i <= 10; ++i) (*m)->Observe(Step(60 * i, 95));  // borg: 90.9; rc: ~edge(95)
  CHECK((*m)->Predict(600).peak == Approx(Edge(95)));
}

TEST_CASE("the factory refuses unknown names and malformed max specs by value",
          "[advisor][models]") {
  const ModelOptions o = ModelOptions::ForResource(Resource::kCpu);
  auto unknown = MakeModel("prophet", o);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message().find("\"prophet\"") != std::string::npos);
  for (const char* spec : {"max:", "max:koordinator", "max:koordinator+", "max:max:a+b"}) {
    INFO(spec);
    CHECK_FALSE(MakeModel(spec, o).ok());
  }
  ModelOptions bad = o;
  bad.koordinator.percentile = 1.5;
  auto refused = MakeModel("koordinator", bad);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("koordinator.percentile") != std::string::npos);
}

}  // namespace
}  // namespace qrm::advisor
