// The Alibaba cluster-trace-v2018 usage layouts: machine_usage.csv and container_usage.csv.
#include <cmath>
#include <string>

#include <catch2/catch.hpp>

#include "advisor/trace/trace_reader.h"
#include "tests/unit/advisor/trace/trace_test_util.h"

namespace qrm::advisor {
namespace {

using testing::ReadText;

// Rows as they appear in the published machine_usage.csv: metrics past the memory are
// often empty.
constexpr const char* kMachineUsage =
    "m_1932,386640,41,92,,,,,\n"
    "m_1932,386650,43,92,,,,,\n"
    "m_2,0,26,84,0.88,1.4,43.17,32.51,5\n";

constexpr const char* kContainerUsage =
    "c_10,m_1556,110,9,56,,,,,,\n"
    "c_10,m_1556,120,11,56,,,,,,\n"
    "c_11,m_1556,110,3,34,2.1,,,0.5,0.4,1\n";

TEST_CASE("machine_usage rows give each machine's cpu_util_percent as a machine-level row") {
  const auto r = ReadText(kMachineUsage, TraceFormat::kAlibabaMachine, Resource::kCpu);
  REQUIRE(r.status.ok());
  REQUIRE(r.rows.size() == 3);
  CHECK(r.rows[0].machine == "m_1932");
  CHECK(r.rows[0].pod.empty());
  CHECK(r.rows[0].time == 386640);
  CHECK(r.rows[0].usage == 41);
  CHECK(r.rows[1].usage == 43);
  CHECK(r.rows[2].machine == "m_2");
  CHECK(r.rows[2].time == 0);
  CHECK(r.rows[2].usage == 26);
  CHECK_FALSE(r.rows[2].capacity.has_value());
  CHECK(r.stats.lines == 3);
  CHECK(r.stats.rows == 3);
  CHECK(r.stats.skipped_empty == 0);
  CHECK_FALSE(r.stats.stopped_early);
}

TEST_CASE("machine_usage rows give mem_util_percent for the memory resource") {
  const auto r = ReadText(kMachineUsage, TraceFormat::kAlibabaMachine, Resource::kMemory);
  REQUIRE(r.status.ok());
  REQUIRE(r.rows.size() == 3);
  CHECK(r.rows[0].usage == 92);
  CHECK(r.rows[2].usage == 84);
}

TEST_CASE("container_usage rows are pods named by container_id on their machine_id") {
  const auto cpu = ReadText(kContainerUsage, TraceFormat::kAlibabaContainer, Resource::kCpu);
  REQUIRE(cpu.status.ok());
  REQUIRE(cpu.rows.size() == 3);
  CHECK(cpu.rows[0].machine == "m_1556");
  CHECK(cpu.rows[0].pod == "c_10");
  CHECK(cpu.rows[0].time == 110);
  CHECK(cpu.rows[0].usage == 9);
  CHECK(cpu.rows[2].pod == "c_11");
  CHECK(cpu.rows[2].usage == 3);

  const auto memory = ReadText(kContainerUsage, TraceFormat::kAlibabaContainer, Resource::kMemory);
  REQUIRE(memory.status.ok());
  CHECK(memory.rows[0].usage == 56);
  CHECK(memory.rows[2].usage == 34);
}

TEST_CASE("rows that stop before the layout's last fields are read when the usage is there") {
  const auto cpu = ReadText("m_1,10,26\nm_1,20,27,85\n", TraceFormat::kAlibabaMachine);
  REQUIRE(cpu.status.ok());
  REQUIRE(cpu.rows.size() == 2);
  CHECK(cpu.rows[0].usage == 26);

  // The memory resource needs the fourth field, which the first row does not have.
  const auto memory =
      ReadText("m_1,10,26\n", TraceFormat::kAlibabaMachine, Resource::kMemory, "mu.csv");
  CHECK(memory.status.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(memory.status.message(),
             Catch::StartsWith("mu.csv:1: mem_util_percent: missing, the line \"m_1,10,26\" "
                               "has 3 fields"));
}

TEST_CASE("a row whose usage field is empty is skipped and counted, not refused") {
  const std::string text = "m_1,0,,84,,,,,\nm_1,10,30,,,,,,\nm_1,20,31,85,,,,,\n";
  const auto cpu = ReadText(text, TraceFormat::kAlibabaMachine, Resource::kCpu);
  REQUIRE(cpu.status.ok());
  CHECK(cpu.stats.skipped_empty == 1);
  CHECK(cpu.stats.rows == 2);
  REQUIRE(cpu.rows.size() == 2);
  CHECK(cpu.rows[0].time == 10);

  const auto memory = ReadText(text, TraceFormat::kAlibabaMachine, Resource::kMemory);
  REQUIRE(memory.status.ok());
  CHECK(memory.stats.skipped_empty == 1);
  REQUIRE(memory.rows.size() == 2);
  CHECK(memory.rows[0].time == 0);
  CHECK(memory.rows[1].time == 20);
}

TEST_CASE("a skipped row still needs a valid machine and time") {
  const auto r = ReadText("m_1,x,,84\n", TraceFormat::kAlibabaMachine);
  CHECK(r.status.message() ==
        "trace.csv:1: time_stamp: invalid value \"x\" (a whole number of seconds, 0 to 2^40)");
  CHECK(r.stats.skipped_empty == 0);
}

TEST_CASE("CRLF line endings, a missing final newline and blank lines are read") {
  const auto r = ReadText("m_1,0,26,84\r\n\r\nm_1,10,27,85\r\n\nm_1,20,28,86",
                          TraceFormat::kAlibabaMachine, Resource::kMemory);
  REQUIRE(r.status.ok());
  REQUIRE(r.rows.size() == 3);
  CHECK(r.rows[0].usage == 84);
  CHECK(r.rows[1].usage == 85);
  CHECK(r.rows[2].usage == 86);
  CHECK(r.rows[2].time == 20);
  CHECK(r.stats.lines == 5);
}

TEST_CASE("a time written as a whole double is read, a fractional one is not") {
  const auto r = ReadText("m_1,386640.0,41\nm_1,386650.00,42\n", TraceFormat::kAlibabaMachine);
  REQUIRE(r.status.ok());
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[0].time == 386640);
  CHECK(r.rows[1].time == 386650);
  for (const char* time : {"386640.5", "386640.", ".0", "386640.0e0", "386640.0 "}) {
    INFO(time);
    const auto bad = ReadText(std::string("m_1,") + time + ",41\n", TraceFormat::kAlibabaMachine);
    CHECK_THAT(bad.status.message(), Catch::StartsWith("trace.csv:1: time_stamp: invalid value"));
  }
}

TEST_CASE("numbers in exponent form and with a decimal point are read") {
  const auto r =
      ReadText("m_1,0,1.5e1,84\nm_1,10,0.25,84\nm_1,20,-0,84\n", TraceFormat::kAlibabaMachine);
  REQUIRE(r.status.ok());
  REQUIRE(r.rows.size() == 3);
  CHECK(r.rows[0].usage == 15);
  CHECK(r.rows[1].usage == 0.25);
  CHECK(r.rows[2].usage == 0);
  CHECK_FALSE(std::signbit(r.rows[2].usage));
}

TEST_CASE("the error of the documentation names file, line, field and value") {
  std::string text;
  for (int i = 0; i < 11; ++i) text += "m_1," + std::to_string(i * 10) + ",26,84,,,,,\n";
  text += "m_1,110,abc,84,,,,,\n";
  const auto r = ReadText(text, TraceFormat::kAlibabaMachine, Resource::kCpu, "machine_usage.csv");
  CHECK(r.status.code() == StatusCode::kInvalidArgument);
  CHECK(r.status.message() ==
        "machine_usage.csv:12: cpu_util_percent: invalid value \"abc\" (a number >= 0)");
  // The rows before the bad line reached the sink: a reader streams.
  CHECK(r.rows.size() == 11);
}

TEST_CASE("every malformed machine_usage value is refused with its field and value") {
  struct Case {
    const char* line;
    const char* message;
  };
  const Case cases[] = {
      {"m_1,10.5,26", "time_stamp: invalid value \"10.5\" (a whole number of seconds, 0 to 2^40)"},
      {"m_1,-10,26", "time_stamp: invalid value \"-10\""},
      {"m_1,,26", "time_stamp: invalid value \"\""},
      {"m_1,99999999999999999999,26", "time_stamp: invalid value \"99999999999999999999\""},
      {"m_1,1e3,26", "time_stamp: invalid value \"1e3\""},
      {"m_1,10,abc", "cpu_util_percent: invalid value \"abc\" (a number >= 0)"},
      {"m_1,10,12abc", "cpu_util_percent: invalid value \"12abc\""},
      {"m_1,10, 12", "cpu_util_percent: invalid value \" 12\""},
      {"m_1,10,+12", "cpu_util_percent: invalid value \"+12\""},
      {"m_1,10,nan", "cpu_util_percent: invalid value \"nan\""},
      {"m_1,10,inf", "cpu_util_percent: invalid value \"inf\""},
      {"m_1,10,1e999", "cpu_util_percent: invalid value \"1e999\""},
      {"m_1,10,-1", "cpu_util_percent: invalid value \"-1\" (a number >= 0)"},
      {",10,26", "machine_id: invalid value \"\" (a non-empty id)"},
      {"\"m_1\",10,26", "machine_id: invalid value \"\\\"m_1\\\"\""},
      {"m_1,10",
       "cpu_util_percent: missing, the line \"m_1,10\" has 2 fields (alibaba-machine "
       "rows have 9 fields: machine_id,time_stamp,cpu_util_percent,"},
      {"m_1", "time_stamp: missing, the line \"m_1\" has 1 fields"},
      {"m_1,10,26,84,,,,,,", "10 fields in \"m_1,10,26,84,,,,,,\" (alibaba-machine rows have 9"},
  };
  for (const Case& c : cases) {
    INFO(c.line);
    const auto r =
        ReadText(std::string("m_1,0,26,84\n") + c.line + "\n", TraceFormat::kAlibabaMachine);
    CHECK(r.status.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(r.status.message(), Catch::StartsWith("trace.csv:2: "));
    CHECK_THAT(r.status.message(), Catch::Contains(c.message));
  }
}

TEST_CASE("every malformed container_usage value is refused with its field and value") {
  struct Case {
    const char* line;
    const char* message;
  };
  const Case cases[] = {
      {",m_1,10,5,50", "container_id: invalid value \"\" (a non-empty id)"},
      {"c_1,,10,5,50", "machine_id: invalid value \"\""},
      {"c_1,m_1,t,5,50", "time_stamp: invalid value \"t\""},
      {"c_1,m_1,10,5%,50", "cpu_util_percent: invalid value \"5%\""},
      {"c_1,m_1,10", "cpu_util_percent: missing"},
      {"c_1,m_1,10,5,50,,,,,,,", "12 fields"},
  };
  for (const Case& c : cases) {
    INFO(c.line);
    const auto r = ReadText(std::string(c.line) + "\n", TraceFormat::kAlibabaContainer,
                            Resource::kCpu, "container_usage.csv");
    CHECK(r.status.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(r.status.message(), Catch::StartsWith("container_usage.csv:1: "));
    CHECK_THAT(r.status.message(), Catch::Contains(c.message));
  }
  const auto memory = ReadText("c_1,m_1,10,5,bad\n", TraceFormat::kAlibabaContainer,
                               Resource::kMemory, "container_usage.csv");
  CHECK(memory.status.message() ==
        "container_usage.csv:1: mem_util_percent: invalid value \"bad\" (a number >= 0)");
}

TEST_CASE("trace format names parse, and an unknown one lists the valid ones") {
  for (const TraceFormat f :
       {TraceFormat::kAlibabaMachine, TraceFormat::kAlibabaContainer, TraceFormat::kSimple}) {
    const StatusOr<TraceFormat> parsed = ParseTraceFormat(TraceFormatName(f));
    REQUIRE(parsed.ok());
    CHECK(*parsed == f);
  }
  CHECK(TraceFormatName(TraceFormat::kAlibabaContainer) == "alibaba-container");
  const StatusOr<TraceFormat> bad = ParseTraceFormat("alibaba");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() ==
        "trace format: invalid value \"alibaba\" (alibaba-machine, alibaba-container or simple)");
}

}  // namespace
}  // namespace qrm::advisor
