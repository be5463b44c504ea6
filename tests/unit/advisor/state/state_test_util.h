// What the model state tests share: a busy synthetic node (Prod pods that come and go, a
// reclaimed pod, noise and bursts), the JSON text of a model's state, and exact comparison of
// predictions.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "advisor/predict/model_factory.h"
#include "common/json_string.h"

namespace qrm::advisor::test {

// Step i (1-based) of a node of 32 cores, steps a minute apart from `start`: Prod pods
// "p<k>" each living a few hours (so pods arrive, leave and are garbage-collected), a batch
// pod, system usage with bursts.
inline Observation BusyStep(int i, int64_t start = 1'700'000'000) {
  std::mt19937 rng(static_cast<uint32_t>(i) * 7919u);
  std::uniform_real_distribution<double> noise(0, 1);
  Observation o;
  o.time = start + 60 * static_cast<int64_t>(i);
  o.capacity = 32;
  for (int k = 0; k < 6; ++k) {
    const int first = k * 90 - 200, last = first + 400;  // alive for 400 steps
    if (i < first || i > last) continue;
    const double usage = 1 + k * 0.5 + noise(rng) * 2;
    const int64_t started = start + 60 * static_cast<int64_t>(std::max(first, 0));
    o.pods.push_back(PodUsage{"p" + std::to_string(k), PriorityClass::kProd, 2.0 + k, usage,
                              usage * 1.3, started});
  }
  const double batch = 4 + noise(rng) * 3;
  o.pods.push_back(PodUsage{"b", PriorityClass::kBatch, 0, batch, batch * 1.5, start});
  const double system = 1 + (i % 37 == 0 ? 3 : 0) + noise(rng) * 0.2;
  o.node = o.PodsUsage() + system;
  o.node_max = o.node + noise(rng) * 2;
  return o;
}

// Options whose every path is exercised within a few hundred steps: histograms that rebase
// (a minute's half-life passes 2^64 in an hour), pods warm after an hour, adaptive margins
// from a dozen horizons, time-of-day pools.
inline ModelOptions FastOptions() {
  ModelOptions o = ModelOptions::ForResource(Resource::kCpu);
  o.koordinator.histogram.half_life_s = 60;
  o.koordinator.cold_start_s = 3600;
  o.resource_central.histogram.half_life_s = 60;
  o.nsigma.half_life_s = 60;
  o.adaptive.min_residuals = 12;
  return o;
}

inline std::vector<std::string> AllSpecs() {
  std::vector<std::string> specs = ModelNames();
  specs.push_back("max:koordinator+adaptive+nsigma-v2");
  return specs;
}

inline std::unique_ptr<PeakModel> Make(const std::string& spec, const ModelOptions& o) {
  auto m = MakeModel(spec, o);
  REQUIRE(m.ok());
  return std::move(m).value();
}

inline rapidjson::Document Save(const PeakModel& m) {
  rapidjson::Document doc;
  rapidjson::Value state;
  const Status s = m.SaveState(state, doc.GetAllocator());
  REQUIRE(s.ok());
  static_cast<rapidjson::Value&>(doc) = std::move(state);
  return doc;
}

inline std::string StateText(const PeakModel& m) {
  return JsonText(Save(m));
}

inline rapidjson::Document Parse(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  REQUIRE_FALSE(doc.HasParseError());
  return doc;
}

// Equal to the last bit.
inline void RequireSamePrediction(const Prediction& a, const Prediction& b) {
  REQUIRE(a.known == b.known);
  REQUIRE(a.peak == b.peak);
  REQUIRE(a.classes == b.classes);
  REQUIRE(a.pods == b.pods);
}

}  // namespace qrm::advisor::test
