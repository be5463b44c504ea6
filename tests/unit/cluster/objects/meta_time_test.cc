// metav1.Time and Go durations: the cases of Go's own time tests (TestDurationString,
// TestParseDuration) that our readers and writers must agree with.
#include "cluster/objects/meta_time.h"

#include <catch2/catch.hpp>

namespace qrm::cluster {
namespace {

constexpr int64_t kS = kNanosPerSecond;

TEST_CASE("times are written in RFC 3339 UTC and read back") {
  CHECK(FormatTime(0) == "1970-01-01T00:00:00Z");
  CHECK(FormatTime(1795680000) == "2026-11-26T08:00:00Z");
  CHECK(*ParseTime("2026-11-26T08:00:00Z") == 1795680000);
  CHECK(*ParseTime("2026-11-26T08:00:00.123456Z") == 1795680000);  // second precision
  CHECK(*ParseTime("2026-11-26T09:30:00+01:30") == 1795680000);
  CHECK(*ParseTime("2026-11-26T06:00:00-02:00") == 1795680000);
  CHECK(*ParseTime("2024-02-29T00:00:00Z") == 1709164800);
}

TEST_CASE("malformed times are refused with the text quoted") {
  for (const char* bad : {"", "2026-11-26", "2026-11-26 08:00:00Z", "2026-13-01T00:00:00Z",
                          "2025-02-29T00:00:00Z", "2026-11-26T24:00:00Z", "2026-11-26T08:00:00",
                          "2026-11-26T08:00:00.Z", "2026-11-26T08:00:00+0100", "yesterday"}) {
    auto t = ParseTime(bad);
    INFO(bad);
    REQUIRE_FALSE(t.ok());
    CHECK_THAT(t.status().message(), Catch::Contains(std::string("\"") + bad + "\""));
  }
}

TEST_CASE("durations are written as Go's Duration.String") {
  // Go: TestDurationString.
  CHECK(FormatDuration(0) == "0s");
  CHECK(FormatDuration(1) == "1ns");
  CHECK(FormatDuration(1100) == "1.1\xC2\xB5s");
  CHECK(FormatDuration(2'200'000) == "2.2ms");
  CHECK(FormatDuration(3'300'000'000) == "3.3s");
  CHECK(FormatDuration(4 * 60 * kS + 5 * kS) == "4m5s");
  CHECK(FormatDuration(4 * 60 * kS + 5'001'000'000) == "4m5.001s");
  CHECK(FormatDuration(5 * 3600 * kS + 6 * 60 * kS + 7'001'000'000) == "5h6m7.001s");
  CHECK(FormatDuration(8 * 60 * kS + 1) == "8m0.000000001s");
  CHECK(FormatDuration(INT64_MAX) == "2562047h47m16.854775807s");
  CHECK(FormatDuration(INT64_MIN) == "-2562047h47m16.854775808s");
  // What NodeMetric carries.
  CHECK(FormatDuration(300 * kS) == "5m0s");
  CHECK(FormatDuration(1800 * kS) == "30m0s");
  CHECK(FormatDuration(3600 * kS) == "1h0m0s");
}

TEST_CASE("durations are read as Go's time.ParseDuration reads them") {
  // Go: TestParseDuration.
  const std::pair<const char*, int64_t> cases[] = {
      {"0", 0},
      {"5s", 5 * kS},
      {"30s", 30 * kS},
      {"1478s", 1478 * kS},
      {"-5s", -5 * kS},
      {"+5s", 5 * kS},
      {"-0", 0},
      {"5.0s", 5 * kS},
      {"5.6s", 5 * kS + 600'000'000},
      {"5.s", 5 * kS},
      {".5s", 500'000'000},
      {"1.004s", kS + 4'000'000},
      {"100.00100s", 100 * kS + 1'000'000},
      {"10ns", 10},
      {"11us", 11'000},
      {"12\xC2\xB5s", 12'000},
      {"12\xCE\xBCs", 12'000},
      {"13ms", 13'000'000},
      {"15m", 15 * 60 * kS},
      {"16h", 16 * 3600 * kS},
      {"3h30m", (3 * 3600 + 30 * 60) * kS},
      {"10.5s4m", 4 * 60 * kS + 10 * kS + 500'000'000},
      {"-2m3.4s", -(2 * 60 * kS + 3 * kS + 400'000'000)},
      {"1h2m3s4ms5us6ns", 3723 * kS + 4'005'006},
      {"39h9m14.425s", (39 * 3600 + 9 * 60 + 14) * kS + 425'000'000},
      {"52763797000ns", 52'763'797'000},
      {"9223372036854775807ns", INT64_MAX},
      {"-9223372036854775808ns", INT64_MIN},
  };
  for (const auto& [text, want] : cases) {
    INFO(text);
    auto got = ParseDuration(text);
    REQUIRE(got.ok());
    CHECK(*got == want);
  }
}

TEST_CASE("malformed durations are refused as Go refuses them") {
  for (const char* bad : {"", "3", "-", "s", ".", "-.", ".s", "+.s", "1d", "5m3", "1.5.5s",
                          "9223372036854775808ns", "9223372036854775.808us"}) {
    INFO(bad);
    auto got = ParseDuration(bad);
    REQUIRE_FALSE(got.ok());
    CHECK_THAT(got.status().message(), Catch::Contains("duration"));
  }
}

}  // namespace
}  // namespace qrm::cluster
