// A whole trace through the replay: a synthetic machine written as simple CSV and read back
// scores exactly as the machine replayed from memory; the Alibaba layout defaults to a
// capacity of 100 (percent); a simple trace without capacity is refused by name; the report's
// JSON carries every score.
#include "advisor/replay/trace_replay.h"

#include <sstream>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>

#include "advisor/replay/reference_trace.h"
#include "advisor/replay/report.h"
#include "advisor/trace/simple_writer.h"

namespace qrm::advisor {
namespace {

ReplayOptions Options() {
  ReplayOptions o;
  o.models = {"koordinator", "adaptive"};
  o.model_options = ModelOptions::ForResource(Resource::kCpu);
  o.warmup_s = 3600;
  return o;
}

TEST_CASE("a trace read from CSV scores as the same machine replayed from memory",
          "[advisor][replay]") {
  auto trace = GenerateSynthetic(ReferenceSyntheticOptions(7, 1));
  REQUIRE(trace.ok());
  std::stringstream csv;
  REQUIRE(WriteSimpleCsv(csv, trace->series).ok());
  TraceReplayOptions o;
  o.format = TraceFormat::kSimple;
  o.replay = Options();
  auto from_csv = ReplayTrace(csv, o);
  REQUIRE(from_csv.ok());
  auto direct = ReplayMachine(trace->series, 32, Options());
  REQUIRE(direct.ok());
  REQUIRE(from_csv->replay.models.size() == 3);
  CHECK(from_csv->replay.machines == 1);
  for (size_t i = 0; i < 3; ++i) {
    const Score& a = from_csv->replay.models[i].after_warmup;
    const Score& b = direct->models[i].after_warmup;
    CHECK(a.windows == b.windows);
    CHECK(a.missed == b.missed);
    // CSV holds the values to 17 significant digits: the same to rounding.
    CHECK(a.MeanReclaimable() == Approx(b.MeanReclaimable()).epsilon(1e-9));
  }
  CHECK(from_csv->replay.models[0].after_warmup.windows > 200);
}

TEST_CASE("Alibaba machine traces are percent of the machine; simple ones need a capacity",
          "[advisor][replay]") {
  std::stringstream alibaba;
  for (int t = 0; t < 3600; t += 10) alibaba << "m_1," << t << ",40,80,,,,,\n";
  TraceReplayOptions o;
  o.format = TraceFormat::kAlibabaMachine;
  o.replay = Options();
  o.replay.warmup_s = 0;
  auto result = ReplayTrace(alibaba, o);
  REQUIRE(result.ok());
  // The oracle reclaims what a flat 40 % leaves: 60 % of 100.
  CHECK(result->replay.models.back().all.MeanReclaimable() == Approx(0.6));

  std::stringstream simple("time,machine,pod,usage\n0,m,,1\n60,m,,2\n");
  TraceReplayOptions s;
  s.format = TraceFormat::kSimple;
  s.name = "usage.csv";
  s.replay = Options();
  auto refused = ReplayTrace(simple, s);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("capacity") != std::string::npos);
  CHECK(refused.status().message().find("usage.csv") != std::string::npos);
}

TEST_CASE("the JSON report carries every model's scores", "[advisor][replay]") {
  auto trace = GenerateSynthetic(ReferenceSyntheticOptions(3, 1));
  REQUIRE(trace.ok());
  auto result = ReplayMachine(trace->series, 32, Options());
  REQUIRE(result.ok());
  rapidjson::Document doc;
  doc.Parse(ReplayJson(*result).c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(doc["machines"].GetUint64() == 1);
  REQUIRE(doc["models"].Size() == 3);
  const auto& k = doc["models"][0];
  CHECK(std::string(k["model"].GetString()) == "koordinator");
  CHECK(k["after_warmup"]["windows"].GetUint64() == result->models[0].after_warmup.windows);
  CHECK(k["after_warmup"]["mean_reclaimable"].GetDouble() ==
        Approx(result->models[0].after_warmup.MeanReclaimable()));
  const std::string table = ReplayTable(*result);
  CHECK(table.find("adaptive") != std::string::npos);
}

}  // namespace
}  // namespace qrm::advisor
