// What ReadTrace does whatever the layout: streaming through files larger than its buffer,
// the line length cap, the sink's errors and stop, unreadable and failing streams.
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <streambuf>
#include <string>

#include <catch2/catch.hpp>

#include "advisor/trace/trace_reader.h"
#include "tests/unit/advisor/trace/trace_test_util.h"

namespace qrm::advisor {
namespace {

using testing::ReadText;

TEST_CASE("a trace far larger than the read buffer is read row by row in order") {
  // ~3.5 MB: lines cross the buffer's refills at every possible offset.
  std::string text;
  constexpr int kRows = 200000;
  for (int i = 0; i < kRows; ++i) {
    text += "m_" + std::to_string(i / 1000) + "," + std::to_string(i * 10) + "," +
            std::to_string(i % 100) + ",50,,,,,\n";
  }
  std::istringstream in(text);
  int64_t expected_time = 0;
  double sum = 0;
  bool in_order = true;
  StatusOr<TraceStats> stats = ReadTrace(in, TraceFormat::kAlibabaMachine, Resource::kCpu,
                                         "big.csv", [&](const UsageRow& row) {
                                           in_order = in_order && row.time == expected_time;
                                           expected_time += 10;
                                           sum += row.usage;
                                           return Status::Ok();
                                         });
  REQUIRE(stats.ok());
  CHECK(stats->rows == kRows);
  CHECK(stats->lines == kRows);
  CHECK(in_order);
  CHECK(sum == 99.0 * 100 / 2 * (kRows / 100));
}

TEST_CASE("a line longer than 64 KiB is refused with its line number") {
  const std::string long_line = "m_1,0," + std::string(kMaxTraceLineBytes, '1') + "\n";
  const auto r = ReadText("m_1,0,1\n" + long_line + "m_1,10,1\n", TraceFormat::kAlibabaMachine,
                          Resource::kCpu, "huge.csv");
  CHECK(r.status.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(r.status.message(), Catch::StartsWith("huge.csv:2: line longer than 65536 bytes"));
  CHECK(r.rows.size() == 1);

  // Without any line ending at all, too: the reader does not wait for the end of the file.
  const auto no_newline = ReadText(std::string(3 * kMaxTraceLineBytes, 'x'), TraceFormat::kSimple,
                                   Resource::kCpu, "blob");
  CHECK_THAT(no_newline.status.message(), Catch::StartsWith("blob:1: line longer than"));
}

TEST_CASE("a line of exactly the cap is not refused for its length, with or without CRLF") {
  const std::string prefix = "m_1,0,";
  const std::string line = prefix + std::string(kMaxTraceLineBytes - prefix.size(), '1');
  REQUIRE(line.size() == kMaxTraceLineBytes);
  for (const char* ending : {"\n", "\r\n", ""}) {
    const auto r = ReadText(line + ending, TraceFormat::kAlibabaMachine);
    // The value is absurd but parses (1e65529 overflows: refused as a value, not a length).
    CHECK_THAT(r.status.message(), Catch::Contains("cpu_util_percent: invalid value"));
  }
  const auto over = ReadText(line + "1\n", TraceFormat::kAlibabaMachine);
  CHECK_THAT(over.status.message(), Catch::StartsWith("trace.csv:1: line longer than 65536"));
}

TEST_CASE("a sink error stops the read and comes back with the file and line") {
  int calls = 0;
  std::istringstream in("m_1,0,1\nm_1,10,2\nm_1,20,3\n");
  StatusOr<TraceStats> stats =
      ReadTrace(in, TraceFormat::kAlibabaMachine, Resource::kCpu, "t.csv", [&](const UsageRow&) {
        ++calls;
        return calls == 2 ? FailedPreconditionError("no room") : Status::Ok();
      });
  REQUIRE_FALSE(stats.ok());
  CHECK(stats.status().code() == StatusCode::kFailedPrecondition);
  CHECK(stats.status().message() == "t.csv:2: no room");
  CHECK(calls == 2);
}

TEST_CASE("a sink's StopReading ends the read early without an error") {
  int calls = 0;
  std::istringstream in("m_1,0,1\nm_1,10,2\nm_1,20,3\n");
  StatusOr<TraceStats> stats =
      ReadTrace(in, TraceFormat::kAlibabaMachine, Resource::kCpu, "t.csv",
                [&](const UsageRow&) { return ++calls == 2 ? StopReading() : Status::Ok(); });
  REQUIRE(stats.ok());
  CHECK(stats->stopped_early);
  CHECK(stats->lines == 2);
  CHECK(calls == 2);
  // A cancelled status of the sink's own is an error, not a stop.
  CHECK_FALSE(IsStopReading(Status(StatusCode::kCancelled, "cancelled")));
  CHECK(IsStopReading(StopReading()));
}

TEST_CASE("a stream that failed to open is refused as not readable") {
  std::ifstream missing("/nonexistent/qrm/machine_usage.csv");
  StatusOr<TraceStats> stats =
      ReadTrace(missing, TraceFormat::kAlibabaMachine, Resource::kCpu, "machine_usage.csv",
                [](const UsageRow&) { return Status::Ok(); });
  REQUIRE_FALSE(stats.ok());
  CHECK(stats.status().code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(stats.status().message(), Catch::StartsWith("machine_usage.csv: the stream"));
}

// A stream buffer that hands out its text, then fails as a disk read would.
class FailingBuf : public std::streambuf {
 public:
  explicit FailingBuf(std::string text) : text_(std::move(text)) {
    setg(text_.data(), text_.data(), text_.data() + text_.size());
  }

 protected:
  int_type underflow() override { throw std::runtime_error("EIO"); }

 private:
  std::string text_;
};

TEST_CASE("a read failure is data loss, not the end of the file") {
  FailingBuf buf("m_1,0,1\nm_1,10,2\n");
  std::istream in(&buf);
  StatusOr<TraceStats> stats = ReadTrace(in, TraceFormat::kAlibabaMachine, Resource::kCpu,
                                         "disk.csv", [](const UsageRow&) { return Status::Ok(); });
  REQUIRE_FALSE(stats.ok());
  CHECK(stats.status().code() == StatusCode::kDataLoss);
  CHECK_THAT(stats.status().message(), Catch::StartsWith("disk.csv: read failed"));
}

}  // namespace
}  // namespace qrm::advisor
