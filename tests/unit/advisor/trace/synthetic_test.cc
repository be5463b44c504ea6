// The synthetic generator against its own ground truth. The statistical checks use fixed
// seeds, so they pass or fail the same way on every run; their tolerances are 4 to 5 standard
// errors, which a correct generator misses for almost no seed.
#include "advisor/trace/synthetic.h"

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace qrm::advisor {
namespace {

SyntheticPod Pod(std::string name, double base, double amplitude, double sigma) {
  SyntheticPod pod;
  pod.name = std::move(name);
  pod.request = base * 2;
  pod.base = base;
  pod.diurnal_amplitude = amplitude;
  pod.noise_sigma = sigma;
  return pod;
}

// A machine whose levels stay many sigma away from 0 and from the capacity: clamping never
// bites, so the truth is exact.
SyntheticOptions Quiet(uint64_t seed, int days = 1) {
  SyntheticOptions o;
  o.seed = seed;
  o.duration = days * kSecondsPerDay;
  o.step = 60;
  o.capacity = 64;
  o.pods = {Pod("web", 8, 4, 0.5), Pod("api", 6, 2, 0.3), Pod("etl", 5, 0, 0.8)};
  o.pods[2].priority = PriorityClass::kBatch;
  o.system_base = 1;
  o.system_sigma = 0.1;
  return o;
}

SyntheticTrace Generate(const SyntheticOptions& options) {
  StatusOr<SyntheticTrace> trace = GenerateSynthetic(options);
  REQUIRE(trace.ok());
  return std::move(trace).value();
}

const SeriesData* FindPod(const MachineSeries& m, const std::string& name) {
  for (const SeriesData& p : m.pods) {
    if (p.pod == name) return &p;
  }
  return nullptr;
}

TEST_CASE("the node's residuals from the truth have mean 0 and the truth's sigma") {
  const SyntheticTrace trace = Generate(Quiet(7));
  const auto& node = trace.series.node;
  REQUIRE(node.size() == 1440);
  double sum = 0, sum_sq = 0;
  for (const RawSample& s : node) {
    const double z = (s.value - trace.truth.ExpectedNode(s.time)) / trace.truth.NodeSigma(s.time);
    sum += z;
    sum_sq += z * z;
  }
  const double n = static_cast<double>(node.size());
  const double mean = sum / n;
  const double variance = sum_sq / n - mean * mean;
  // Standard errors: 1/sqrt(n) for the mean of z, sqrt(2/n) for its variance.
  CHECK(std::abs(mean) < 4 / std::sqrt(n));
  CHECK(std::abs(variance - 1) < 4 * std::sqrt(2 / n));
  // The node's sigma adds the pods' and the system's variances.
  CHECK(trace.truth.NodeSigma(0) == Approx(std::sqrt(0.25 + 0.09 + 0.64 + 0.01)));
}

TEST_CASE("about 5% of node samples lie above expected + 1.645 sigma without bursts") {
  const SyntheticTrace trace = Generate(Quiet(11, 7));
  int above = 0;
  for (const RawSample& s : trace.series.node) {
    if (s.value > trace.truth.ExpectedNode(s.time) + 1.645 * trace.truth.NodeSigma(s.time)) ++above;
  }
  const double n = static_cast<double>(trace.series.node.size());
  const double share = above / n;
  CHECK(std::abs(share - 0.05) < 4 * std::sqrt(0.05 * 0.95 / n));
}

TEST_CASE("each pod's samples follow its own expected usage and sigma") {
  const SyntheticTrace trace = Generate(Quiet(3, 2));
  for (const SeriesData& pod : trace.series.pods) {
    INFO(pod.pod);
    double sum = 0;
    for (const RawSample& s : pod.samples) {
      sum += (s.value - trace.truth.ExpectedPod(pod.pod, s.time)) / trace.truth.PodSigma(pod.pod);
    }
    const double n = static_cast<double>(pod.samples.size());
    CHECK(n == 2880);
    CHECK(std::abs(sum / n) < 4 / std::sqrt(n));
  }
}

TEST_CASE("a pod's expected usage peaks at its diurnal peak and bottoms out 12 hours later") {
  SyntheticPod pod = Pod("web", 8, 4, 0);
  pod.diurnal_peak = 15 * 3600;
  CHECK(ExpectedPodUsage(pod, 15 * 3600) == Approx(12));
  CHECK(ExpectedPodUsage(pod, 3 * 3600) == Approx(4));
  CHECK(ExpectedPodUsage(pod, 2 * kSecondsPerDay + 15 * 3600) == Approx(12));
  CHECK(ExpectedPodUsage(pod, 21 * 3600) == Approx(8).margin(1e-9));

  // Without noise the samples are the truth itself.
  SyntheticOptions o = Quiet(1);
  o.pods = {pod};
  o.system_sigma = 0;
  const SyntheticTrace trace = Generate(o);
  for (const RawSample& s : trace.series.pods[0].samples) {
    REQUIRE(s.value == Approx(ExpectedPodUsage(pod, s.time)));
  }
}

TEST_CASE("the node is the sum of its pods and the system component") {
  SyntheticOptions o = Quiet(5);
  o.system_sigma = 0;  // the system's part is then exactly system_base
  const SyntheticTrace trace = Generate(o);
  for (std::size_t i = 0; i < trace.series.node.size(); ++i) {
    double pods = 0;
    for (const SeriesData& p : trace.series.pods) pods += p.samples[i].value;
    REQUIRE(trace.series.node[i].value == Approx(pods + o.system_base).epsilon(1e-12));
  }
}

TEST_CASE("bursts add their height exactly where and when the truth puts them") {
  SyntheticOptions o = Quiet(21, 3);
  o.bursts.per_day = 8;
  o.bursts.height = 6;
  o.bursts.duration = 600;
  const SyntheticTrace with = Generate(o);
  o.bursts.per_day = 0;
  const SyntheticTrace without = Generate(o);
  // Bursts have their own random stream: the noise is the same, the difference is the bursts.
  REQUIRE(with.series.node.size() == without.series.node.size());
  int burst_samples = 0;
  for (std::size_t i = 0; i < with.series.node.size(); ++i) {
    const int64_t t = with.series.node[i].time;
    const double added = with.series.node[i].value - without.series.node[i].value;
    REQUIRE(added == Approx(with.truth.BurstAt(t)).margin(1e-9));
    if (with.truth.BurstAt(t) > 0) ++burst_samples;
  }
  CHECK(burst_samples > 0);
  // Each burst lands on one pod, and only that pod's samples carry it.
  for (const SeriesData& pod : with.series.pods) {
    const SeriesData* plain = FindPod(without.series, pod.pod);
    REQUIRE(plain != nullptr);
    for (std::size_t i = 0; i < pod.samples.size(); ++i) {
      const double added = pod.samples[i].value - plain->samples[i].value;
      REQUIRE(added == Approx(with.truth.PodBurstAt(pod.pod, pod.samples[i].time)).margin(1e-9));
    }
  }
  // A Poisson process of 8 a day over 3 days: 24 expected, sd ~4.9.
  const double count = static_cast<double>(with.truth.bursts().size());
  CHECK(std::abs(count - 24) < 4 * std::sqrt(24.0));
  for (const SyntheticBurst& b : with.truth.bursts()) {
    CHECK(b.end - b.start <= 600);
    CHECK(b.height == 6);
    CHECK(with.truth.Running(b.pod, b.start));
  }
}

TEST_CASE("pods that arrive late or leave early have samples only while they run") {
  SyntheticOptions o = Quiet(9);
  o.pods[0].end = 6 * 3600;          // web leaves at 06:00
  o.pods[1].start = 12 * 3600 + 30;  // api arrives at 12:00:30
  o.pods.push_back(Pod("never", 1, 0, 0.1));
  o.pods.back().start = 2 * kSecondsPerDay;  // after the trace
  const SyntheticTrace trace = Generate(o);
  const SeriesData* web = FindPod(trace.series, "web");
  const SeriesData* api = FindPod(trace.series, "api");
  REQUIRE(web != nullptr);
  REQUIRE(api != nullptr);
  CHECK(web->samples.size() == 360);
  CHECK(web->samples.back().time < 6 * 3600);
  CHECK(api->samples.front().time == 12 * 3600 + 60);
  CHECK(api->samples.size() == 720 - 1);
  CHECK(FindPod(trace.series, "never") == nullptr);
  // The truth agrees: a pod that does not run expects nothing and adds no noise.
  CHECK(trace.truth.ExpectedPod("web", 7 * 3600) == 0);
  CHECK_FALSE(trace.truth.Running("web", 6 * 3600));
  CHECK(trace.truth.Running("web", 6 * 3600 - 1));
  CHECK(trace.truth.NodeSigma(7 * 3600) == Approx(std::sqrt(0.64 + 0.01)));
}

TEST_CASE("the same seed gives the same trace and another seed a different one") {
  const SyntheticTrace a = Generate(Quiet(42));
  const SyntheticTrace b = Generate(Quiet(42));
  const SyntheticTrace c = Generate(Quiet(43));
  REQUIRE(a.series.node.size() == c.series.node.size());
  int same_as_b = 0, same_as_c = 0;
  for (std::size_t i = 0; i < a.series.node.size(); ++i) {
    same_as_b += a.series.node[i].value == b.series.node[i].value;
    same_as_c += a.series.node[i].value == c.series.node[i].value;
  }
  CHECK(same_as_b == static_cast<int>(a.series.node.size()));
  CHECK(same_as_c == 0);
  CHECK(a.series.pods[1].samples[100].value == b.series.pods[1].samples[100].value);
}

TEST_CASE("node samples stay within 0 and the capacity") {
  SyntheticOptions o = Quiet(2);
  o.capacity = 20;  // the expected peak is 8+4 + 6+2 + 5 + 1 = 26
  const SyntheticTrace trace = Generate(o);
  int at_capacity = 0;
  for (const RawSample& s : trace.series.node) {
    REQUIRE(s.value >= 0);
    REQUIRE(s.value <= 20);
    at_capacity += s.value == 20;
  }
  CHECK(at_capacity > 0);
  CHECK(trace.series.capacity == 20.0);
}

TEST_CASE("the series carries each pod's priority and request") {
  const SyntheticTrace trace = Generate(Quiet(1));
  const SeriesData* etl = FindPod(trace.series, "etl");
  REQUIRE(etl != nullptr);
  CHECK(etl->priority == PriorityClass::kBatch);
  CHECK(etl->request == 10.0);
  CHECK(trace.series.machine == "synthetic-0");
}

TEST_CASE("the sampling step and start set the sample times") {
  SyntheticOptions o = Quiet(1);
  o.start = 1000;
  o.step = 3600;
  o.duration = 5 * 3600 + 1;
  const SyntheticTrace trace = Generate(o);
  std::vector<int64_t> times;
  for (const RawSample& s : trace.series.node) times.push_back(s.time);
  CHECK(times == std::vector<int64_t>{1000, 4600, 8200, 11800, 15400, 19000});
}

TEST_CASE("invalid generator options are refused naming the option and value") {
  const std::map<std::string, std::function<void(SyntheticOptions&)>> cases = {
      {"step: invalid value 0 (1..3600 seconds)", [](SyntheticOptions& o) { o.step = 0; }},
      {"step: invalid value 3601", [](SyntheticOptions& o) { o.step = 3601; }},
      {"duration: invalid value 0", [](SyntheticOptions& o) { o.duration = 0; }},
      {"capacity: invalid value 0 (a number > 0)", [](SyntheticOptions& o) { o.capacity = 0; }},
      {"machine: invalid value \"a,b\"", [](SyntheticOptions& o) { o.machine = "a,b"; }},
      {"pod: invalid value \"web\" (a unique name)",
       [](SyntheticOptions& o) { o.pods[1].name = "web"; }},
      {"pod web: diurnal_amplitude: invalid value 9 (at most the base 8",
       [](SyntheticOptions& o) { o.pods[0].diurnal_amplitude = 9; }},
      {"pod web: noise_sigma: invalid value -1",
       [](SyntheticOptions& o) { o.pods[0].noise_sigma = -1; }},
      {"pod web: base: invalid value nan",
       [](SyntheticOptions& o) { o.pods[0].base = std::nan(""); }},
      {"pod api: start: invalid value 50 (>= 0 and before its end 50)",
       [](SyntheticOptions& o) {
         o.pods[1].start = 50;
         o.pods[1].end = 50;
       }},
      {"bursts.duration: invalid value 0",
       [](SyntheticOptions& o) {
         o.bursts.per_day = 1;
         o.bursts.duration = 0;
       }},
      {"bursts.per_day: invalid value -1", [](SyntheticOptions& o) { o.bursts.per_day = -1; }},
      {"duration: invalid value 31536000 (at most 50000000 samples",
       [](SyntheticOptions& o) {
         o.step = 1;
         o.duration = 365 * kSecondsPerDay;
       }},
  };
  for (const auto& [message, mutate] : cases) {
    INFO(message);
    SyntheticOptions o = Quiet(1);
    mutate(o);
    const StatusOr<SyntheticTrace> trace = GenerateSynthetic(o);
    REQUIRE_FALSE(trace.ok());
    CHECK(trace.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(trace.status().message(), Catch::StartsWith("synthetic trace: "));
    CHECK_THAT(trace.status().message(), Catch::Contains(message));
  }
}

TEST_CASE("the pod mix has prod and batch pods whose requests fit the machine") {
  PodMixOptions mix;
  mix.seed = 4;
  mix.prod = 3;
  mix.batch = 5;
  mix.capacity = 40;
  mix.churn = 0;
  const std::vector<SyntheticPod> pods = MixedPods(mix);
  REQUIRE(pods.size() == 8);
  double requests = 0;
  int prod = 0;
  for (const SyntheticPod& p : pods) {
    requests += p.request;
    prod += p.priority == PriorityClass::kProd;
    CHECK(p.base < p.request);
    CHECK(p.diurnal_amplitude <= p.base);
    CHECK(p.start == 0);
  }
  CHECK(prod == 3);
  CHECK(requests == Approx(0.9 * 40));
  CHECK(pods[0].name == "prod-0");
  CHECK(pods[7].name == "batch-4");
  // Deterministic for a seed, different for another.
  CHECK(MixedPods(mix)[5].base == pods[5].base);
  mix.seed = 5;
  CHECK(MixedPods(mix)[5].base != pods[5].base);
}

TEST_CASE("with full churn every pod of the mix arrives late or leaves early") {
  PodMixOptions mix;
  mix.churn = 2;  // above 1: every pod, prod ones included (they churn at half the rate)
  mix.start = 1000;
  mix.duration = 2 * kSecondsPerDay;
  for (const SyntheticPod& p : MixedPods(mix)) {
    INFO(p.name);
    const bool late = p.start > 1000 && p.start < 1000 + kSecondsPerDay;
    const bool early = p.end >= 1000 + kSecondsPerDay && p.end < 1000 + 2 * kSecondsPerDay;
    CHECK(late != early);
  }
  // The mix generates a valid trace.
  SyntheticOptions o;
  o.pods = MixedPods(mix);
  o.start = 1000;
  o.duration = mix.duration;
  CHECK(GenerateSynthetic(o).ok());
}

}  // namespace
}  // namespace qrm::advisor
