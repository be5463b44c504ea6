#include "advisor/report/report_schedule.h"

#include <catch2/catch.hpp>

namespace qrm::advisor {
namespace {

TEST_CASE("the report is written every interval and sooner on a large change") {
  ReportSchedule s(ReportScheduleOptions{});  // 60 s, 5 %, 10 s gap
  CHECK(s.Due(1000, 0.5, 0.5));               // never written
  s.Written(1000, 0.5, 0.5);
  CHECK_FALSE(s.Due(1059, 0.54, 0.46));    // within 5 %
  CHECK(s.Due(1060, 0.5, 0.5));            // the interval
  CHECK_FALSE(s.Due(1005, 0.9, 0.5));      // a large change, but within the 10 s gap
  CHECK(s.Due(1010, 0.56, 0.5));           // CPU moved 6 %
  CHECK(s.Due(1010, 0.5, 0.44));           // memory moved 6 %
  CHECK_FALSE(s.Due(1010, 0.549, 0.451));  // just under 5 %
}

TEST_CASE("a controller's report interval overrides within koordlet's bounds") {
  ReportSchedule s(ReportScheduleOptions{});
  s.Written(0, 0, 0);
  s.SetIntervalOverride(10);  // floored to 30 s as koordlet does
  CHECK(s.interval_s() == 30);
  CHECK(s.Due(30, 0, 0));
  s.SetIntervalOverride(3600);
  CHECK(s.interval_s() == 600);
  s.SetIntervalOverride(std::nullopt);
  CHECK(s.interval_s() == 60);
}

TEST_CASE("report schedule options are checked naming the field") {
  ReportScheduleOptions o;
  CHECK(o.Validate().ok());
  o.interval_s = 20;
  CHECK_THAT(o.Validate().message(), Catch::Contains("report_interval 20s"));
  o = {};
  o.change = 0;
  CHECK_THAT(o.Validate().message(), Catch::Contains("report_change 0"));
  o = {};
  o.min_gap_s = 61;
  CHECK_THAT(o.Validate().message(), Catch::Contains("report_min_gap 61s"));
}

}  // namespace
}  // namespace qrm::advisor
