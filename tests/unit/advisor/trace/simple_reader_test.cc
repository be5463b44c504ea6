// qrm's simple trace CSV: header, comments, optional columns and its errors.
#include <string>

#include <catch2/catch.hpp>

#include "advisor/trace/trace_reader.h"
#include "tests/unit/advisor/trace/trace_test_util.h"

namespace qrm::advisor {
namespace {

using testing::ReadText;

TEST_CASE("a simple trace has machine-level rows and pod rows with optional columns") {
  const auto r = ReadText(
      "# node n1, 32 cores\n"
      "time,machine,pod,usage,priority,request,capacity\n"
      "\n"
      "0,n1,,3.5,,,32\n"
      "0,n1,web-1,1.25,prod,2,\n"
      "  \t\n"
      "# batch pods below\n"
      "60,n1,etl-7,0.5,batch,,32\n",
      TraceFormat::kSimple);
  REQUIRE(r.status.ok());
  REQUIRE(r.rows.size() == 3);
  CHECK(r.rows[0].machine == "n1");
  CHECK(r.rows[0].pod.empty());
  CHECK(r.rows[0].usage == 3.5);
  CHECK(r.rows[0].capacity == 32.0);
  CHECK_FALSE(r.rows[0].priority.has_value());
  CHECK(r.rows[1].pod == "web-1");
  CHECK(r.rows[1].priority == PriorityClass::kProd);
  CHECK(r.rows[1].request == 2.0);
  CHECK_FALSE(r.rows[1].capacity.has_value());
  CHECK(r.rows[2].time == 60);
  CHECK(r.rows[2].priority == PriorityClass::kBatch);
  CHECK_FALSE(r.rows[2].request.has_value());
  CHECK(r.stats.lines == 8);
  CHECK(r.stats.rows == 3);
}

TEST_CASE("the simple format's columns come in any order and the optional ones may be absent") {
  const auto r =
      ReadText("pod,usage,machine,time\nweb,0.5,n1,120\n,2,n1,120\n", TraceFormat::kSimple);
  REQUIRE(r.status.ok());
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[0].pod == "web");
  CHECK(r.rows[0].machine == "n1");
  CHECK(r.rows[0].time == 120);
  CHECK(r.rows[0].usage == 0.5);
  CHECK(r.rows[1].pod.empty());
  CHECK(r.rows[1].usage == 2);
}

TEST_CASE("the simple format reads CRLF, a byte order mark and a missing final newline") {
  const auto r =
      ReadText("\xEF\xBB\xBFtime,machine,pod,usage\r\n0,n1,,1\r\n60,n1,,2", TraceFormat::kSimple);
  REQUIRE(r.status.ok());
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[1].time == 60);
  CHECK(r.rows[1].usage == 2);
}

TEST_CASE("a simple row with an empty usage is skipped and counted") {
  const auto r = ReadText("time,machine,pod,usage\n0,n1,,\n60,n1,,2\n", TraceFormat::kSimple);
  REQUIRE(r.status.ok());
  CHECK(r.stats.skipped_empty == 1);
  REQUIRE(r.rows.size() == 1);
  CHECK(r.rows[0].time == 60);
}

TEST_CASE("a simple trace without a header line is refused") {
  for (const char* text : {"", "# only a comment\n\n", "\n"}) {
    INFO(text);
    const auto r = ReadText(text, TraceFormat::kSimple, Resource::kCpu, "s.csv");
    CHECK(r.status.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(r.status.message(), Catch::Contains("no header line"));
    CHECK_THAT(r.status.message(), Catch::StartsWith("s.csv:"));
  }
}

TEST_CASE("a bad simple header names the column") {
  struct Case {
    const char* header;
    const char* message;
  };
  const Case cases[] = {
      {"time,machine,pod,usage,cpu",
       "s.csv:2: header: unknown column \"cpu\" (columns: time, machine, pod, usage, priority, "
       "request, capacity)"},
      {"time,machine,pod,usage,time", "s.csv:2: header: repeated column \"time\""},
      {"time,machine,pod", "s.csv:2: header: no \"usage\" column in \"time,machine,pod\""},
      {"time,machine,usage", "s.csv:2: header: no \"pod\" column"},
      {"Time,machine,pod,usage", "unknown column \"Time\""},
      {"0,n1,,1", "unknown column \"0\""},
  };
  for (const Case& c : cases) {
    INFO(c.header);
    const auto r = ReadText(std::string("# a comment\n") + c.header + "\n0,n1,,1\n",
                            TraceFormat::kSimple, Resource::kCpu, "s.csv");
    CHECK(r.status.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(r.status.message(), Catch::StartsWith("s.csv:2: header: "));
    CHECK_THAT(r.status.message(), Catch::Contains(c.message));
  }
}

TEST_CASE("every malformed simple row is refused with its line, field and value") {
  struct Case {
    const char* line;
    const char* message;
  };
  const Case cases[] = {
      {"0,n1,,1,,", "6 fields in \"0,n1,,1,,\" (the header has 7)"},
      {"0,n1,,1,,,32,", "8 fields"},
      {"x,n1,,1,,,", "time: invalid value \"x\" (a whole number of seconds, 0 to 2^40)"},
      {"-60,n1,,1,,,", "time: invalid value \"-60\""},
      {"0,,,1,,,", "machine: invalid value \"\" (a non-empty id)"},
      {"0,n1,\"w\",1,,,", "pod: invalid value \"\\\"w\\\"\""},
      {"0,n1,,1e,,,", "usage: invalid value \"1e\" (a number >= 0)"},
      {"0,n1,,-0.5,,,", "usage: invalid value \"-0.5\""},
      {"0,n1,w,1,gold,,", "priority: invalid value \"gold\" (prod, mid, batch or free)"},
      {"0,n1,w,1,,-2,", "request: invalid value \"-2\" (a number >= 0)"},
      {"0,n1,,1,,,0", "capacity: invalid value \"0\" (a number > 0)"},
      {"0,n1,,1,,,infinity", "capacity: invalid value \"infinity\" (a number >= 0)"},
      {"0,n1,,1,prod,,", "priority: invalid value \"prod\" (empty on a machine-level row"},
      {"0,n1,,1,,4,", "request: invalid value \"4\" (empty on a machine-level row"},
  };
  for (const Case& c : cases) {
    INFO(c.line);
    const auto r = ReadText(std::string("time,machine,pod,usage,priority,request,capacity\n") +
                                "0,n1,,1,,,\n" + c.line + "\n",
                            TraceFormat::kSimple, Resource::kCpu, "s.csv");
    CHECK(r.status.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(r.status.message(), Catch::StartsWith("s.csv:3: "));
    CHECK_THAT(r.status.message(), Catch::Contains(c.message));
  }
}

TEST_CASE("the resource does not change what a simple trace's usage column means") {
  const std::string text = "time,machine,pod,usage\n0,n1,,7\n";
  const auto cpu = ReadText(text, TraceFormat::kSimple, Resource::kCpu);
  const auto memory = ReadText(text, TraceFormat::kSimple, Resource::kMemory);
  REQUIRE(cpu.rows.size() == 1);
  REQUIRE(memory.rows.size() == 1);
  CHECK(cpu.rows[0].usage == 7);
  CHECK(memory.rows[0].usage == 7);
}

}  // namespace
}  // namespace qrm::advisor
