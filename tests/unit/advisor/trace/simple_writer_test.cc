// WriteSimpleCsv: its exact output, what it refuses, and the round trip through ReadTrace.
#include "advisor/trace/simple_writer.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "advisor/trace/machine_series.h"
#include "advisor/trace/synthetic.h"

namespace qrm::advisor {
namespace {

MachineSeries Small() {
  MachineSeries m;
  m.machine = "n1";
  m.capacity = 32;
  m.node = {{0, 3.5}, {60, 4}};
  m.pods.push_back(SeriesData{"web", {{0, 1.25}, {60, 0.1}}, PriorityClass::kProd, 2.0});
  m.pods.push_back(SeriesData{"etl", {{60, 1e-7}}, std::nullopt, std::nullopt});
  return m;
}

void CheckSameSeries(const MachineSeries& a, const MachineSeries& b) {
  CHECK(a.machine == b.machine);
  CHECK(a.capacity == b.capacity);
  REQUIRE(a.node.size() == b.node.size());
  for (std::size_t i = 0; i < a.node.size(); ++i) {
    REQUIRE(a.node[i].time == b.node[i].time);
    REQUIRE(a.node[i].value == b.node[i].value);  // exact: numbers are written to round-trip
  }
  REQUIRE(a.pods.size() == b.pods.size());
  for (std::size_t p = 0; p < a.pods.size(); ++p) {
    INFO(a.pods[p].pod);
    CHECK(a.pods[p].pod == b.pods[p].pod);
    CHECK(a.pods[p].priority == b.pods[p].priority);
    CHECK(a.pods[p].request == b.pods[p].request);
    REQUIRE(a.pods[p].samples.size() == b.pods[p].samples.size());
    for (std::size_t i = 0; i < a.pods[p].samples.size(); ++i) {
      REQUIRE(a.pods[p].samples[i].time == b.pods[p].samples[i].time);
      REQUIRE(a.pods[p].samples[i].value == b.pods[p].samples[i].value);
    }
  }
}

std::vector<MachineSeries> ReadBack(const std::string& text) {
  std::istringstream in(text);
  std::vector<MachineSeries> machines;
  StatusOr<TraceStats> stats = ReadMachineSeries(in, TraceFormat::kSimple, Resource::kCpu,
                                                 "written.csv", {}, [&](MachineSeries&& m) {
                                                   machines.push_back(std::move(m));
                                                   return Status::Ok();
                                                 });
  INFO(stats.status().ToString());
  REQUIRE(stats.ok());
  return machines;
}

TEST_CASE("the simple writer writes a header, the machine's rows, then each pod's rows") {
  std::ostringstream out;
  REQUIRE(WriteSimpleCsv(out, Small()).ok());
  CHECK(out.str() ==
        "time,machine,pod,usage,priority,request,capacity\n"
        "0,n1,,3.5,,,32\n"
        "60,n1,,4,,,32\n"
        "0,n1,web,1.25,prod,2,32\n"
        "60,n1,web,0.1,prod,2,32\n"
        "60,n1,etl,1e-07,,,32\n");
}

TEST_CASE("machines written one after another without repeated headers read back as they were") {
  MachineSeries second = Small();
  second.machine = "n2";
  second.capacity.reset();
  std::ostringstream out;
  REQUIRE(WriteSimpleCsv(out, Small()).ok());
  REQUIRE(WriteSimpleCsv(out, second, /*with_header=*/false).ok());
  const std::vector<MachineSeries> machines = ReadBack(out.str());
  REQUIRE(machines.size() == 2);
  CheckSameSeries(machines[0], Small());
  CheckSameSeries(machines[1], second);
}

TEST_CASE("a synthetic trace survives the simple CSV round trip exactly") {
  SyntheticOptions o;
  o.seed = 17;
  o.duration = kSecondsPerDay / 2;
  o.step = 30;
  PodMixOptions mix;
  mix.duration = o.duration;
  mix.churn = 0.5;
  o.pods = MixedPods(mix);
  o.system_base = 1;
  o.system_sigma = 0.2;
  o.bursts.per_day = 10;
  o.bursts.height = 3;
  const StatusOr<SyntheticTrace> trace = GenerateSynthetic(o);
  REQUIRE(trace.ok());
  std::ostringstream out;
  REQUIRE(WriteSimpleCsv(out, trace->series).ok());
  const std::vector<MachineSeries> machines = ReadBack(out.str());
  REQUIRE(machines.size() == 1);
  CheckSameSeries(machines[0], trace->series);
}

TEST_CASE("the simple writer refuses what the reader would refuse and writes nothing") {
  struct Case {
    const char* message;
    void (*mutate)(MachineSeries&);
  };
  const Case cases[] = {
      {"machine: invalid value \"n,1\" (an id without commas",
       [](MachineSeries& m) { m.machine = "n,1"; }},
      {"machine: invalid value \"\" (a non-empty id)", [](MachineSeries& m) { m.machine = ""; }},
      {"pod: invalid value \"w\\neb\"", [](MachineSeries& m) { m.pods[0].pod = "w\neb"; }},
      {"capacity: invalid value 0 (a number > 0)", [](MachineSeries& m) { m.capacity = 0; }},
      {"machine n1: invalid value usage -1 at 60 (usage >= 0)",
       [](MachineSeries& m) { m.node[1].value = -1; }},
      {"pod web: invalid value usage nan at 0",
       [](MachineSeries& m) { m.pods[0].samples[0].value = std::nan(""); }},
      {"pod web: invalid value time -5", [](MachineSeries& m) { m.pods[0].samples[0].time = -5; }},
      {"pod web: request: invalid value inf",
       [](MachineSeries& m) { m.pods[0].request = std::numeric_limits<double>::infinity(); }},
  };
  for (const Case& c : cases) {
    INFO(c.message);
    MachineSeries m = Small();
    c.mutate(m);
    std::ostringstream out;
    const Status status = WriteSimpleCsv(out, m);
    CHECK(status.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(status.message(), Catch::Contains(c.message));
    CHECK(out.str().empty());
  }
}

TEST_CASE("a stream that fails while writing is data loss") {
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  const Status status = WriteSimpleCsv(out, Small());
  CHECK(status.code() == StatusCode::kDataLoss);
}

}  // namespace
}  // namespace qrm::advisor
